package serverwatch

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/llmrun/llmrun/runtime/servermetrics"
	"github.com/llmrun/llmrun/runtime/servermetrics/engines"
)

// DiscoverTimeout bounds the one read of a server root's /metrics that
// Discover makes.
const DiscoverTimeout = 2 * time.Second

// MetricsURL is the /metrics URL at the root of a base URL
// (scheme://host:port/metrics), without its credentials, path or query;
// false when baseURL is no http or https URL with a host.
func MetricsURL(baseURL string) (string, bool) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/metrics"}).String(), true
}

// Discover reads the /metrics at the root of each base URL once (each
// root once, all at once, each read bounded by DiscoverTimeout) and
// returns the servers whose metrics are a known engine's, in the order of
// the base URLs. A root that does not answer, or answers with other
// metrics, is left out without a word: most servers are no inference
// engine with metrics.
func Discover(ctx context.Context, client *http.Client, baseURLs []string) []Server {
	var roots []string
	for _, b := range baseURLs {
		if root, ok := MetricsURL(b); ok && !slices.Contains(roots, root) {
			roots = append(roots, root)
		}
	}
	known := make([]bool, len(roots))
	var wg sync.WaitGroup
	for i, root := range roots {
		wg.Go(func() {
			snap, err := servermetrics.Scrape(ctx, client, root, DiscoverTimeout)
			known[i] = err == nil && engines.Detect(snap.Families) != nil
		})
	}
	wg.Wait()
	var out []Server
	for i, root := range roots {
		if known[i] {
			out = append(out, Server{URL: root})
		}
	}
	return out
}
