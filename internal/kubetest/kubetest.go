// Package kubetest decodes the manifests "llmrun kube" writes into the
// Kubernetes API's own types, strictly: a field those types do not have,
// or a value of the wrong type, fails the test, as kubectl apply's
// server-side validation would refuse it.
package kubetest

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Manifests are the three documents llmrun kube writes.
type Manifests struct {
	ConfigMap corev1.ConfigMap
	Service   corev1.Service
	Job       batchv1.Job
}

// Decode decodes a YAML stream of a ConfigMap, a Service and a Job, in
// that order, rejecting unknown fields.
func Decode(t *testing.T, stream string) *Manifests {
	t.Helper()
	docs := strings.Split(stream, "\n---\n")
	if len(docs) != 3 {
		t.Fatalf("%d YAML documents, want 3:\n%s", len(docs), stream)
	}
	var m Manifests
	for i, into := range []any{&m.ConfigMap, &m.Service, &m.Job} {
		if err := yaml.UnmarshalStrict([]byte(docs[i]), into); err != nil {
			t.Fatalf("document %d does not decode strictly: %v\n%s", i+1, err, docs[i])
		}
	}
	for i, kind := range []string{m.ConfigMap.Kind, m.Service.Kind, m.Job.Kind} {
		if want := []string{"ConfigMap", "Service", "Job"}[i]; kind != want {
			t.Fatalf("document %d is a %q, want a %s", i+1, kind, want)
		}
	}
	return &m
}

// Container is the Job's one container.
func (m *Manifests) Container(t *testing.T) corev1.Container {
	t.Helper()
	if cs := m.Job.Spec.Template.Spec.Containers; len(cs) != 1 {
		t.Fatalf("the Job's pods have %d containers, want 1", len(cs))
	}
	return m.Job.Spec.Template.Spec.Containers[0]
}

// Files are the ConfigMap's files by the paths the Job's volume mounts
// them at.
func (m *Manifests) Files(t *testing.T) map[string][]byte {
	t.Helper()
	vols := m.Job.Spec.Template.Spec.Volumes
	if len(vols) != 1 || vols[0].ConfigMap == nil || vols[0].ConfigMap.Name != m.ConfigMap.Name {
		t.Fatalf("the Job's volumes %+v: want the ConfigMap %s", vols, m.ConfigMap.Name)
	}
	files := map[string][]byte{}
	for _, it := range vols[0].ConfigMap.Items {
		data, ok := m.ConfigMap.Data[it.Key]
		if !ok {
			bin, ok := m.ConfigMap.BinaryData[it.Key]
			if !ok {
				t.Fatalf("the volume mounts key %s, which the ConfigMap lacks", it.Key)
			}
			data = string(bin)
		}
		files[it.Path] = []byte(data)
	}
	return files
}
