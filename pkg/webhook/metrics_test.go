package webhook_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestMetricsNeedAToken: the manager's metrics, served securely as by
// default, answer 401 without a token, 403 to a ServiceAccount that may
// not read them, and 200 to one bound to a role with GET /metrics, as the
// chart's serval-metrics-reader grants.
func TestMetricsNeedAToken(t *testing.T) {
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	for _, name := range []string{"scraper", "stranger"} {
		_, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-test"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-test"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "metrics-reader-test"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "scraper", Namespace: "default"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	token := func(sa string) string {
		tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		require.NoError(t, err)
		return tr.Status.Token
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the caller is what is checked here, not the server
	get := func(bearer string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, "https://"+metricsHostPort+"/metrics", nil)
		require.NoError(t, err)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", metricsHostPort, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "the metrics server listens")
	status, _ := get("")
	assert.Equal(t, http.StatusUnauthorized, status, "no token")
	status, _ = get("not-a-token")
	assert.Equal(t, http.StatusUnauthorized, status, "a token the API server does not know")
	status, body := get(token("stranger"))
	assert.Equal(t, http.StatusForbidden, status, "a ServiceAccount without the role")
	assert.Contains(t, body, "Authorization denied for user system:serviceaccount:default:stranger")
	status, body = get(token("scraper"))
	assert.Equal(t, http.StatusOK, status, "a ServiceAccount bound to GET /metrics")
	assert.True(t, strings.Contains(body, "go_gc_duration_seconds"), "the metrics are served")

	plain, err := http.Get("http://" + metricsHostPort + "/metrics")
	if err == nil {
		_ = plain.Body.Close()
		assert.Equal(t, http.StatusBadRequest, plain.StatusCode, "plain HTTP is not served")
	}
}
