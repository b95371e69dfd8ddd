package kube

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// LoopbackWarning is a warning for a URL raw, given to the pods by the
// flag (its name and value, as the user wrote it), whose
// host is this machine's own: localhost (or a name under .localhost), an
// address of 127.0.0.0/8 or ::1, or 0.0.0.0 or ::, which a client reaches
// as its own machine. Inside a pod that is the pod itself. "" for any
// other host, and for a value that is not a URL; a URL without a scheme
// ("127.0.0.1:8000") is read as http's.
func LoopbackWarning(flag, raw string) string {
	host := urlHost(raw)
	if host == "" {
		host = urlHost("http://" + raw)
	}
	if !loopbackHost(host) {
		return ""
	}
	return fmt.Sprintf("%s: %s is the loopback, which inside a pod is the pod itself, not this machine nor the server: "+
		"give the address the pods reach it at, such as a Service's name (http://SERVICE.NAMESPACE.svc:PORT)", flag, host)
}

// urlHost is the host of a URL, without its port; "" when raw is not a
// URL with a host.
func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func loopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}
