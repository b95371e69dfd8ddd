// Package kubetest decodes the manifests "llmrun kube" writes into the
// Kubernetes API's own types, strictly: a field those types do not have,
// or a value of the wrong type, fails the test, as kubectl apply's
// server-side validation would refuse it; and so does a pod that Pod
// Security admission's "restricted" level would refuse, checked by the
// admission plugin's own library.
package kubetest

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	psa "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// Manifests are the three documents llmrun kube writes.
type Manifests struct {
	ConfigMap corev1.ConfigMap
	Service   corev1.Service
	Job       batchv1.Job
}

// Decode decodes a YAML stream of a ConfigMap, a Service and a Job, in
// that order, rejecting unknown fields, and checks the names, keys and
// paths the API server would refuse.
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
	m.validate(t)
	if refused := PodSecurity(t, psa.LevelRestricted, &m.Job.Spec.Template); refused != "" {
		t.Errorf("Pod Security %q refuses the Job's pods: %s", psa.LevelRestricted, refused)
	}
	return &m
}

// PodSecurity is what Pod Security admission says of pods made from the
// template at level, in the latest version of its checks: "" if it admits
// them, else its reasons, as the API server words them
// ("seccompProfile (pod or container \"llmrun\" must set …)").
func PodSecurity(t *testing.T, level psa.Level, pod *corev1.PodTemplateSpec) string {
	t.Helper()
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatalf("Pod Security's checks: %v", err)
	}
	result := policy.AggregateCheckResults(evaluator.EvaluatePod(psa.LevelVersion{Level: level, Version: psa.LatestVersion()}, &pod.ObjectMeta, &pod.Spec))
	if result.Allowed {
		return ""
	}
	reasons := make([]string, len(result.ForbiddenReasons))
	for i, reason := range result.ForbiddenReasons {
		reasons[i] = reason
		if detail := result.ForbiddenDetails[i]; detail != "" {
			reasons[i] += " (" + detail + ")"
		}
	}
	return strings.Join(reasons, ", ")
}

// validate checks what the API server would refuse beyond the types: the
// names, the ConfigMap's keys, the pods' hostnames (NAME-INDEX, a DNS
// label) and the volume's paths.
func (m *Manifests) validate(t *testing.T) {
	t.Helper()
	for what, errs := range map[string][]string{
		"the name " + m.Job.Name:  validation.IsDNS1123Label(m.Job.Name),
		"the last pod's hostname": validation.IsDNS1123Label(fmt.Sprintf("%s-%d", m.Job.Name, max(0, deref(m.Job.Spec.Completions)-1))),
	} {
		if len(errs) > 0 {
			t.Errorf("%s: %v", what, errs)
		}
	}
	for key := range m.ConfigMap.Data {
		if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
			t.Errorf("ConfigMap key %q: %v", key, errs)
		}
	}
	for key := range m.ConfigMap.BinaryData {
		if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
			t.Errorf("ConfigMap key %q: %v", key, errs)
		}
	}
	for _, v := range m.Job.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		for _, it := range v.ConfigMap.Items {
			if path.IsAbs(it.Path) || slices.Contains(strings.Split(it.Path, "/"), "..") {
				t.Errorf("volume item path %q: must be relative, without '..'", it.Path)
			}
		}
	}
}

func deref(p *int32) int {
	if p == nil {
		return 0
	}
	return int(*p)
}

// Deref is what p points to, or nil: an optional field of the API's
// types, as a test prints it.
func Deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// EnvValue is the value of the variable name in env, "" if absent.
func EnvValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
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
	i := slices.IndexFunc(vols, func(v corev1.Volume) bool { return v.ConfigMap != nil })
	if i < 0 || vols[i].ConfigMap.Name != m.ConfigMap.Name || slices.ContainsFunc(vols[i+1:], func(v corev1.Volume) bool { return v.ConfigMap != nil }) {
		t.Fatalf("the Job's volumes %+v: want one of the ConfigMap %s", vols, m.ConfigMap.Name)
	}
	files := map[string][]byte{}
	for _, it := range vols[i].ConfigMap.Items {
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
