package main

// The label selections the panels share. The manager's metrics come from
// its Service (job serval-metrics); the routers', the pickers' and vLLM's
// from the chart's PodMonitors, which copy the pods' owner labels into
// inferencegraph, llminferenceservice and role.
const (
	svcSel   = `namespace=~"$namespace", name=~"$service"`
	graphSel = `namespace=~"$namespace", inferencegraph=~"$graph"`
	llmSel   = `namespace=~"$namespace", llminferenceservice=~"$service"`
)

var dashboards = []dashboard{controlPlane, graphs, llms}

var controlPlane = dashboard{
	file: "control-plane.json", uid: "serval-control-plane", title: "Serval / Control plane",
	description: "Serval's manager: reconciles, work queues, writes, the services' state, admission and its certificate.",
	variables: []variable{
		{"namespace", "Namespace", `label_values(serval_condition, namespace)`},
		{"service", "Service", `label_values(serval_condition{namespace=~"$namespace"}, name)`},
	},
	rows: []row{
		{"Services", []panel{
			stat("Services Ready", "none", "Services whose Ready condition is True, by kind.",
				query{`sum by (kind) (serval_condition{type="Ready", status="True", ` + svcSel + `})`, "{{kind}}"}),
			stat("Services not Ready", "none", "Services whose Ready condition is False or Unknown, by kind.",
				query{`sum by (kind) (serval_condition{type="Ready", status!="True", ` + svcSel + `})`, "{{kind}}"}),
			ts("Not Ready by reason", "none", "Services not Ready over time, by the Ready condition's reason.",
				query{`sum by (kind, reason) (serval_condition{type="Ready", status!="True", ` + svcSel + `})`, "{{kind}} {{reason}}"}),
			table("Services not Ready", "Each service not Ready, with the reason its Ready condition gives (kubectl describe says the message).",
				query{`max by (kind, namespace, name, status, reason) (serval_condition{type="Ready", status!="True", ` + svcSel + `})`, ""}),
		}},
		{"Reconciles", []panel{
			ts("Reconciles per second", "ops", "Reconciles by controller and result.",
				query{`sum by (controller, result) (rate(controller_runtime_reconcile_total{job=~"serval-metrics"}[$__rate_interval]))`, "{{controller}} {{result}}"}),
			ts("Reconcile errors per second", "ops", "Reconciles that returned an error, by controller.",
				query{`sum by (controller) (rate(controller_runtime_reconcile_errors_total{job=~"serval-metrics"}[$__rate_interval]))`, "{{controller}}"}),
			ts("Reconcile latency (p50, p99)", "s", "How long one reconcile takes, by controller.",
				query{`histogram_quantile(0.99, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{job=~"serval-metrics"}[$__rate_interval])))`, "p99 {{controller}}"},
				query{`histogram_quantile(0.5, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{job=~"serval-metrics"}[$__rate_interval])))`, "p50 {{controller}}"}),
		}},
		{"Work queues", []panel{
			ts("Queue depth", "none", "Objects waiting for a reconcile, by queue.",
				query{`sum by (name) (workqueue_depth{job=~"serval-metrics"})`, "{{name}}"}),
			ts("Queue wait (p99)", "s", "How long an object waits in the queue before its reconcile starts.",
				query{`histogram_quantile(0.99, sum by (name, le) (rate(workqueue_queue_duration_seconds_bucket{job=~"serval-metrics"}[$__rate_interval])))`, "{{name}}"}),
			ts("Retries per second", "ops", "Objects put back in the queue with a delay, by queue.",
				query{`sum by (name) (rate(workqueue_retries_total{job=~"serval-metrics"}[$__rate_interval]))`, "{{name}}"}),
		}},
		{"Writes", []panel{
			ts("Child writes per second", "ops", "Children written (apply, handover, prune), by kind.",
				query{`sum by (kind) (rate(serval_apply_total{result="write"}[$__rate_interval]))`, "{{kind}}"}),
			ts("Children skipped as unchanged", "ops", "Children whose desired state was already applied, by kind.",
				query{`sum by (kind) (rate(serval_apply_total{result="skip"}[$__rate_interval]))`, "{{kind}}"}),
			ts("API requests per second", "reqps", "The manager's requests to the API server, by verb and resource.",
				query{`sum by (verb, resource) (rate(serval_api_requests_total[$__rate_interval]))`, "{{verb}} {{resource}}"}),
		}},
		{"Admission and certificate", []panel{
			ts("Webhook latency (p99)", "s", "How long the manager takes to answer admission, by webhook path.",
				query{`histogram_quantile(0.99, sum by (webhook, le) (rate(controller_runtime_webhook_latency_seconds_bucket{job=~"serval-metrics"}[$__rate_interval])))`, "{{webhook}}"}),
			ts("Refusals per second", "ops", "Requests admission refused, by kind and operation.",
				query{`sum by (kind, operation) (rate(serval_admission_refusals_total[$__rate_interval]))`, "{{kind}} {{operation}}"}),
			stat("Webhook certificate expires in", "s", "Time left on the webhook serving certificate the manager serves.",
				query{`min(serval_webhook_certificate_expiry_timestamp_seconds) - time()`, ""}),
		}},
		{"Health", []panel{
			stat("Leader", "none", "1 where a manager holds the leader lease.",
				query{`max(leader_election_master_status{job=~"serval-metrics"})`, ""}),
			ts("Memory", "bytes", "Resident memory of each manager replica.",
				query{`process_resident_memory_bytes{job=~"serval-metrics"}`, "{{pod}}"}),
			ts("Model cache copies", "none", "Copies of the model caches on their nodes, by state.",
				query{`sum by (status) (serval_model_cache_copy)`, "{{status}}"}),
		}},
	},
}

var graphs = dashboard{
	file: "inferencegraph.json", uid: "serval-inferencegraph", title: "Serval / InferenceGraph routers",
	description: "The InferenceGraph routers: requests, latency and each step's outcome, per graph.",
	variables: []variable{
		{"namespace", "Namespace", `label_values(serval_router_requests_total, namespace)`},
		{"graph", "Graph", `label_values(serval_router_requests_total{namespace=~"$namespace"}, inferencegraph)`},
	},
	rows: []row{
		{"Requests", []panel{
			ts("Requests per second", "reqps", "Requests each graph's router answered, by status code.",
				query{`sum by (namespace, inferencegraph, code) (rate(serval_router_requests_total{` + graphSel + `}[$__rate_interval]))`, "{{namespace}}/{{inferencegraph}} {{code}}"}),
			ts("Share of 5xx answers", "percentunit", "Answers with a 5xx code over all answers, per graph.",
				query{`sum by (namespace, inferencegraph) (rate(serval_router_requests_total{code=~"5..", ` + graphSel + `}[$__rate_interval])) / sum by (namespace, inferencegraph) (rate(serval_router_requests_total{` + graphSel + `}[$__rate_interval]))`, "{{namespace}}/{{inferencegraph}}"}),
			ts("Latency (p50, p99)", "s", "How long the router takes to answer, per graph.",
				query{`histogram_quantile(0.99, sum by (namespace, inferencegraph, le) (rate(serval_router_request_duration_seconds_bucket{` + graphSel + `}[$__rate_interval])))`, "p99 {{namespace}}/{{inferencegraph}}"},
				query{`histogram_quantile(0.5, sum by (namespace, inferencegraph, le) (rate(serval_router_request_duration_seconds_bucket{` + graphSel + `}[$__rate_interval])))`, "p50 {{namespace}}/{{inferencegraph}}"}),
		}},
		{"Steps", []panel{
			ts("Step calls by outcome", "reqps", "Each step's calls, by node, step and outcome.",
				query{`sum by (inferencegraph, node, step, outcome) (rate(serval_router_step_requests_total{` + graphSel + `}[$__rate_interval]))`, "{{inferencegraph}} {{node}}/{{step}} {{outcome}}"}),
			ts("Step latency (p99)", "s", "How long each step's call takes.",
				query{`histogram_quantile(0.99, sum by (inferencegraph, node, step, le) (rate(serval_router_step_duration_seconds_bucket{` + graphSel + `}[$__rate_interval])))`, "{{inferencegraph}} {{node}}/{{step}}"}),
		}},
		{"Router processes", []panel{
			ts("Memory", "bytes", "Resident memory of each router pod.",
				query{`sum by (namespace, inferencegraph, pod) (process_resident_memory_bytes{` + graphSel + `})`, "{{inferencegraph}} {{pod}}"}),
			ts("CPU", "percentunit", "CPU of each router pod.",
				query{`sum by (namespace, inferencegraph, pod) (rate(process_cpu_seconds_total{` + graphSel + `}[$__rate_interval]))`, "{{inferencegraph}} {{pod}}"}),
		}},
	},
}

var llms = dashboard{
	file: "llm.json", uid: "serval-llm", title: "Serval / LLMInferenceServices",
	description: "LLMInferenceServices: the endpoint picker's pool and vLLM's own metrics, by service and by role (prefill, decode).",
	variables: []variable{
		{"namespace", "Namespace", `label_values(vllm:num_requests_running, namespace)`},
		{"service", "Service", `label_values(vllm:num_requests_running{namespace=~"$namespace"}, llminferenceservice)`},
	},
	rows: []row{
		{"Load", []panel{
			ts("Requests waiting", "none", "Requests queued in vLLM, by service and role.",
				query{`sum by (llminferenceservice, role) (vllm:num_requests_waiting{` + llmSel + `})`, "{{llminferenceservice}} {{role}}"}),
			ts("Requests running", "none", "Requests vLLM is running, by service and role.",
				query{`sum by (llminferenceservice, role) (vllm:num_requests_running{` + llmSel + `})`, "{{llminferenceservice}} {{role}}"}),
			ts("KV cache use", "percentunit", "The KV cache's use, the mean over each service's pods of a role.",
				query{`avg by (llminferenceservice, role) (vllm:kv_cache_usage_perc{` + llmSel + `})`, "{{llminferenceservice}} {{role}}"}),
		}},
		{"Latency", []panel{
			ts("Time to first token (p50, p99)", "s", "From a request's arrival to its first token.",
				query{`histogram_quantile(0.99, sum by (llminferenceservice, le) (rate(vllm:time_to_first_token_seconds_bucket{` + llmSel + `}[$__rate_interval])))`, "p99 {{llminferenceservice}}"},
				query{`histogram_quantile(0.5, sum by (llminferenceservice, le) (rate(vllm:time_to_first_token_seconds_bucket{` + llmSel + `}[$__rate_interval])))`, "p50 {{llminferenceservice}}"}),
			ts("Prefill and decode time (p99)", "s", "Time in prefill and in decode per request, by role of the pod.",
				query{`histogram_quantile(0.99, sum by (llminferenceservice, role, le) (rate(vllm:request_prefill_time_seconds_bucket{` + llmSel + `}[$__rate_interval])))`, "prefill {{llminferenceservice}} {{role}}"},
				query{`histogram_quantile(0.99, sum by (llminferenceservice, role, le) (rate(vllm:request_decode_time_seconds_bucket{` + llmSel + `}[$__rate_interval])))`, "decode {{llminferenceservice}} {{role}}"}),
			ts("Tokens per second", "none", "Prompt and generated tokens, by service.",
				query{`sum by (llminferenceservice) (rate(vllm:prompt_tokens_total{` + llmSel + `}[$__rate_interval]))`, "prompt {{llminferenceservice}}"},
				query{`sum by (llminferenceservice) (rate(vllm:generation_tokens_total{` + llmSel + `}[$__rate_interval]))`, "generated {{llminferenceservice}}"}),
		}},
		{"Endpoint picker", []panel{
			ts("Pool's ready pods", "none", "Pods the picker sees ready in its pool.",
				query{`sum by (llminferenceservice) (inference_pool_ready_pods{` + llmSel + `})`, "{{llminferenceservice}}"}),
			ts("Pool's mean queue", "none", "The mean queue over the pool's pods, as the picker sees it.",
				query{`avg by (llminferenceservice) (inference_pool_average_queue_size{` + llmSel + `})`, "{{llminferenceservice}}"}),
			ts("Pool's mean KV cache use", "percentunit", "The mean KV cache use over the pool's pods, as the picker sees it.",
				query{`avg by (llminferenceservice) (inference_pool_average_kv_cache_utilization{` + llmSel + `})`, "{{llminferenceservice}}"}),
			ts("Requests the picker routed", "reqps", "Requests per second through the picker, by model.",
				query{`sum by (llminferenceservice, model_name) (rate(inference_objective_request_total{` + llmSel + `}[$__rate_interval]))`, "{{llminferenceservice}} {{model_name}}"}),
		}},
		{"Services", []panel{
			table("LLMInferenceServices not Ready", "Each LLMInferenceService not Ready, with its reason (from the manager's metrics).",
				query{`max by (namespace, name, reason) (serval_condition{kind="LLMInferenceService", type="Ready", status!="True", namespace=~"$namespace", name=~"$service"})`, ""}),
		}},
	},
}
