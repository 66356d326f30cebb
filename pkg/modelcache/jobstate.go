package modelcache

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// JobSucceeded reports whether a download Job ended well.
func JobSucceeded(j *batchv1.Job) bool {
	return j.Status.Succeeded > 0 || jobCondition(j, batchv1.JobComplete)
}

// JobFailed reports whether a download Job ended in failure (its Failed
// condition: a Job that retries its pods has failed pods before it fails).
func JobFailed(j *batchv1.Job) bool { return jobCondition(j, batchv1.JobFailed) }

// JobFinished reports whether a download Job ended, well or not.
func JobFinished(j *batchv1.Job) bool {
	return JobSucceeded(j) || j.Status.Failed > 0 || JobFailed(j)
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// Latest is the newest of jobs, nil for none: the highest attempt number
// (AttemptAnnotation), then the latest creation, then the name. Creation
// times have a resolution of a second, and two attempts of one second
// must not take turns being the latest.
func Latest(jobs []batchv1.Job) *batchv1.Job {
	var latest *batchv1.Job
	for i := range jobs {
		if latest == nil || newer(&jobs[i], latest) {
			latest = &jobs[i]
		}
	}
	return latest
}

// newer reports whether a was made after b.
func newer(a, b *batchv1.Job) bool {
	if x, y := attemptOf(a), attemptOf(b); x != y {
		return x > y
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.After(b.CreationTimestamp.Time)
	}
	return a.Name > b.Name
}

// attemptOf is a Job's attempt number; 0 when it has none (a Job made by
// an earlier version).
func attemptOf(j *batchv1.Job) int {
	n, _ := strconv.Atoi(j.Annotations[AttemptAnnotation])
	return n
}

// AttemptAnnotation numbers a model's download Jobs on a node: 1 for the
// first of a round.
const AttemptAnnotation = "serving.serval.dev/download-attempt"

// maxTerminationMessage is how much of a container's termination message a
// failure keeps: its end, where the storage initializer's error is.
const maxTerminationMessage = 512

// WhyFailed is a failed Job's reason and message: its Failed condition,
// and the message its container ended with (the storage initializer's
// error), read from its pods through r.
func WhyFailed(ctx context.Context, r client.Reader, job *batchv1.Job) (reason, message string) {
	reason = "DownloadFailed"
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			reason, message = c.Reason, c.Message
		}
	}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{"job-name": job.Name}); err == nil {
		for _, p := range pods.Items {
			for _, cs := range p.Status.ContainerStatuses {
				if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
					msg := strings.TrimSpace(t.Message)
					if len(msg) > maxTerminationMessage {
						msg = "..." + msg[len(msg)-maxTerminationMessage:]
					}
					message = fmt.Sprintf("Job %s: container %s exited with %d (%s)", job.Name, cs.Name, t.ExitCode, t.Reason)
					if msg != "" {
						message += ": " + msg
					}
				}
			}
		}
	}
	if message == "" {
		message = "Job " + job.Name + " failed"
	}
	return reason, message
}

// WaitingReason is why a download pod is not running: its scheduling
// failure, or its container's waiting reason (an image that cannot be
// pulled); "" when it is on its way.
func WaitingReason(pods []corev1.Pod) (reason, message string) {
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
				return c.Reason, fmt.Sprintf("pod %s: %s", p.Name, c.Message)
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
				return w.Reason, fmt.Sprintf("pod %s: container %s: %s", p.Name, cs.Name, w.Message)
			}
		}
	}
	return "", ""
}

// The reasons of a copy's failure, which the agent reports and the manager
// carries into the model's state.
const (
	// ReasonIrregularFile: the folder holds a file that is neither
	// regular, a folder nor a link.
	ReasonIrregularFile = "IrregularFile"
	// ReasonModelTooLarge: the copy is larger than its cache's declared
	// modelSize.
	ReasonModelTooLarge = "ModelTooLarge"
	// ReasonCopyChanged: the files no longer have the digest they were
	// downloaded with.
	ReasonCopyChanged = "CopyChanged"
)
