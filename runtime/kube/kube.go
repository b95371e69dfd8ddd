// Package kube writes the Kubernetes manifests of a distributed run: a
// ConfigMap holding the script and the files it reads, a headless Service
// through which the instances reach instance 0's rendezvous, and an
// Indexed Job of one pod per instance, each running "llmrun run" with the
// environment that makes it its instance (docs/distributed.md).
//
// The manifests are plain data written as YAML, with only the fields
// llmrun sets: the package does not depend on the Kubernetes client
// libraries (its tests decode the output strictly into k8s.io/api's
// types). A secret never appears in them: API keys and the InfluxDB
// token come from a Secret the user names, by reference.
package kube

import (
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llmrun/llmrun/internal/capped"
	"github.com/llmrun/llmrun/runtime/rendezvous"
	"sigs.k8s.io/yaml"
)

// maxConfigMapObject is the most a ConfigMap may come to: the 1 MiB
// Kubernetes stores per object.
const maxConfigMapObject = 1 << 20

// RendezvousPort is the port instance 0 listens at, in its pod.
const RendezvousPort = 7000

// MountDir is where the ConfigMap's files are in the pods.
const MountDir = "/llmrun/files"

// The pods' root filesystem is read-only: what llmrun writes in a run (a
// Hugging Face tokenizer it downloads, under HOME's .cache) goes to
// emptyDir volumes of at most ScratchSize each, at HomeDir (HOME) and
// TempDir (TMPDIR).
const (
	HomeDir     = "/llmrun/home"
	TempDir     = "/tmp"
	ScratchSize = "1Gi"
)

// Labels of the pods, which the Service selects.
const (
	nameLabel     = "app.kubernetes.io/name"
	instanceLabel = "app.kubernetes.io/instance"
)

// Config is what the manifests are made of.
type Config struct {
	// Name names the ConfigMap, the Service and the Job: a DNS label.
	Name string
	// Namespace is the namespace of all three; "" for kubectl's current.
	Namespace string
	// Image is the llmrun image the pods run (its entrypoint is llmrun).
	Image string
	// Instances is the number of pods, each one instance of the run.
	Instances int
	// ClusterDomain is the cluster's DNS domain, "cluster.local" unless
	// the cluster was set up otherwise.
	ClusterDomain string
	// Secret names the Secret the keys come from; "" for none.
	Secret string
	// SecretEnv are the environment variables set from the Secret, each
	// from the key of its own name. A pod does not start without the
	// Secret and each of these keys.
	SecretEnv []string
	// Files are the ConfigMap's files, at paths relative to MountDir.
	Files []File
	// WorkDir is the pods' working directory, relative to MountDir ("."
	// for MountDir itself): where the command line's relative paths are.
	WorkDir string
	// Args are the arguments of llmrun in the pods: "run", its flags and
	// the script.
	Args []string
	// Resources are the requests and limits of each pod.
	Resources Resources
	// ActiveDeadline is how long the Job may run, from its start, before
	// Kubernetes stops its pods (activeDeadlineSeconds), in whole seconds
	// rounded up.
	ActiveDeadline time.Duration
	// TTLAfterFinished is how long the finished Job and its pods, and so
	// their logs, are kept before Kubernetes deletes them
	// (ttlSecondsAfterFinished), in whole seconds rounded up.
	TTLAfterFinished time.Duration
}

// DefaultTTLAfterFinished keeps a finished Job's pods, whose logs hold
// the results, for a day.
const DefaultTTLAfterFinished = 24 * time.Hour

// StartMargin is what DefaultActiveDeadline allows beyond the run for
// the rest of a pod's life: pulling the image, starting, the preflight
// and writing the result.
const StartMargin = 10 * time.Minute

// DefaultActiveDeadline is the Job's deadline for a run that takes at
// most run once its pods have started (the rendezvous, setup, the
// scenarios, teardown): run and StartMargin.
func DefaultActiveDeadline(run time.Duration) time.Duration { return run + StartMargin }

// maxTTL is the most ttlSecondsAfterFinished holds: an int32 of seconds.
const maxTTL = math.MaxInt32 * time.Second

// File is one file of the ConfigMap.
type File struct {
	// Path is where the file is under MountDir, slash-separated.
	Path string
	Data []byte
}

// namePattern is a DNS label (RFC 1123), which a namespace must be.
var namePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// serviceNamePattern is an RFC 1035 label, which the manifests' name must
// be, the Service's being one: a DNS label that starts with a letter.
var serviceNamePattern = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// maxNameLength leaves room in a pod's hostname, NAME-INDEX, for the
// index within the 63 characters of a DNS label.
const maxNameLength = 52

// rendezvous is the address instance 0 listens at and the others connect
// to: its pod's name under the Service, in full, so that instance 0 finds
// itself in the /etc/hosts the kubelet writes before DNS knows it.
func (c Config) rendezvous() string {
	return fmt.Sprintf("%s-0.%s.$(POD_NAMESPACE).svc.%s:%d", c.Name, c.Name, c.ClusterDomain, RendezvousPort)
}

// Check checks the configuration, as Write does first.
func (c Config) Check() error {
	for _, word := range []struct{ what, value string }{{"image", c.Image}, {"cluster domain", c.ClusterDomain}} {
		if err := CheckWord(word.what, word.value); err != nil {
			return err
		}
	}
	for _, name := range c.SecretEnv {
		if err := CheckEnvName("variable from the Secret", name); err != nil {
			return err
		}
	}
	switch {
	case c.Name == "" || len(c.Name) > maxNameLength || !serviceNamePattern.MatchString(c.Name):
		return fmt.Errorf("name %q: want lower-case letters, digits and '-', starting with a letter and ending with a letter or digit, at most %d characters", c.Name, maxNameLength)
	case c.Namespace != "" && !namePattern.MatchString(c.Namespace):
		return fmt.Errorf("namespace %q: want lower-case letters, digits and '-'", c.Namespace)
	case c.Image == "":
		return errors.New("no image: name the llmrun image the pods run")
	case c.Instances < 1 || c.Instances > rendezvous.MaxInstances:
		return fmt.Errorf("instances %d: want 1 to %d", c.Instances, rendezvous.MaxInstances)
	case c.ClusterDomain == "":
		return errors.New("no cluster domain")
	case c.Secret != "" && !namePattern.MatchString(c.Secret):
		return fmt.Errorf("secret %q: want the name of a Secret: lower-case letters, digits and '-'", c.Secret)
	case c.Secret == "" && len(c.SecretEnv) > 0:
		return fmt.Errorf("%s from a Secret, but no Secret named", c.SecretEnv[0])
	case c.ActiveDeadline <= 0:
		return fmt.Errorf("active deadline %v: want a positive duration", c.ActiveDeadline)
	case c.TTLAfterFinished <= 0 || c.TTLAfterFinished > maxTTL:
		return fmt.Errorf("TTL after finished %v: want a positive duration of at most %v (Kubernetes deletes the pods, and their logs with them, once it has passed)", c.TTLAfterFinished, maxTTL)
	}
	return c.Resources.check()
}

// Write writes the ConfigMap, the Service and the Job as one YAML stream
// of three documents.
func Write(w io.Writer, c Config) error {
	if err := c.Check(); err != nil {
		return err
	}
	if err := checkFiles(c.Files); err != nil {
		return err
	}
	for i, doc := range []any{c.configMap(), c.service(), c.job()} {
		b, err := yaml.Marshal(doc)
		if err != nil {
			return fmt.Errorf("writing the manifests: %w", err)
		}
		if i == 0 && len(b) > maxConfigMapObject {
			// Base64 (binary files) and YAML's escapes make the object
			// larger than its files: kubectl apply would refuse it.
			return fmt.Errorf("the ConfigMap comes to %d KiB once encoded, more than the %s Kubernetes stores in one object: give fewer or smaller files (--file), or mount large ones from a volume of your own",
				(len(b)+1023)>>10, capped.Size(maxConfigMapObject))
		}
		if i > 0 {
			b = append([]byte("---\n"), b...)
		}
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("writing the manifests: %w", err)
		}
	}
	return nil
}

// The manifests' shapes: the fields llmrun sets of Kubernetes' types, by
// their JSON names.

type meta struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

type configMap struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   meta              `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
	BinaryData map[string][]byte `json:"binaryData,omitempty"`
}

type service struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Metadata   meta        `json:"metadata"`
	Spec       serviceSpec `json:"spec"`
}

type serviceSpec struct {
	ClusterIP                string            `json:"clusterIP"`
	Selector                 map[string]string `json:"selector"`
	PublishNotReadyAddresses bool              `json:"publishNotReadyAddresses"`
	Ports                    []servicePort     `json:"ports"`
}

type servicePort struct {
	Name       string `json:"name"`
	Port       int    `json:"port"`
	TargetPort int    `json:"targetPort"`
	Protocol   string `json:"protocol"`
}

type job struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Metadata   meta    `json:"metadata"`
	Spec       jobSpec `json:"spec"`
}

type jobSpec struct {
	CompletionMode          string      `json:"completionMode"`
	Completions             int         `json:"completions"`
	Parallelism             int         `json:"parallelism"`
	BackoffLimit            int         `json:"backoffLimit"`
	ActiveDeadlineSeconds   int64       `json:"activeDeadlineSeconds"`
	TTLSecondsAfterFinished int64       `json:"ttlSecondsAfterFinished"`
	Template                podTemplate `json:"template"`
}

type podTemplate struct {
	Metadata podMeta `json:"metadata"`
	Spec     podSpec `json:"spec"`
}

type podMeta struct {
	Labels map[string]string `json:"labels"`
}

type podSpec struct {
	Subdomain                    string                     `json:"subdomain"`
	RestartPolicy                string                     `json:"restartPolicy"`
	AutomountServiceAccountToken bool                       `json:"automountServiceAccountToken"`
	SecurityContext              podSecurityContext         `json:"securityContext"`
	TopologySpreadConstraints    []topologySpreadConstraint `json:"topologySpreadConstraints"`
	Containers                   []container                `json:"containers"`
	Volumes                      []volume                   `json:"volumes"`
}

type podSecurityContext struct {
	RunAsNonRoot   bool           `json:"runAsNonRoot"`
	SeccompProfile seccompProfile `json:"seccompProfile"`
}

type seccompProfile struct {
	Type string `json:"type"`
}

type topologySpreadConstraint struct {
	MaxSkew           int           `json:"maxSkew"`
	TopologyKey       string        `json:"topologyKey"`
	WhenUnsatisfiable string        `json:"whenUnsatisfiable"`
	LabelSelector     labelSelector `json:"labelSelector"`
}

type labelSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type container struct {
	Name            string          `json:"name"`
	Image           string          `json:"image"`
	Args            []string        `json:"args"`
	WorkingDir      string          `json:"workingDir"`
	Env             []envVar        `json:"env"`
	Ports           []containerPort `json:"ports"`
	Resources       resources       `json:"resources"`
	VolumeMounts    []volumeMount   `json:"volumeMounts"`
	SecurityContext securityContext `json:"securityContext"`
}

type envVar struct {
	Name      string        `json:"name"`
	Value     string        `json:"value,omitempty"`
	ValueFrom *envVarSource `json:"valueFrom,omitempty"`
}

type envVarSource struct {
	FieldRef     *fieldRef     `json:"fieldRef,omitempty"`
	SecretKeyRef *secretKeyRef `json:"secretKeyRef,omitempty"`
}

type fieldRef struct {
	FieldPath string `json:"fieldPath"`
}

type secretKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

type containerPort struct {
	Name          string `json:"name"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol"`
}

type resources struct {
	Requests map[string]string `json:"requests"`
	Limits   map[string]string `json:"limits"`
}

type volumeMount struct {
	Name      string `json:"name"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly"`
}

type volume struct {
	Name      string           `json:"name"`
	ConfigMap *configMapVolume `json:"configMap,omitempty"`
	EmptyDir  *emptyDirVolume  `json:"emptyDir,omitempty"`
}

type emptyDirVolume struct {
	SizeLimit string `json:"sizeLimit"`
}

type configMapVolume struct {
	Name  string    `json:"name"`
	Items []keyPath `json:"items,omitempty"`
}

type keyPath struct {
	Key  string `json:"key"`
	Path string `json:"path"`
}

type securityContext struct {
	RunAsNonRoot             bool         `json:"runAsNonRoot"`
	AllowPrivilegeEscalation bool         `json:"allowPrivilegeEscalation"`
	ReadOnlyRootFilesystem   bool         `json:"readOnlyRootFilesystem"`
	Capabilities             capabilities `json:"capabilities"`
}

type capabilities struct {
	Drop []string `json:"drop"`
}

func (c Config) meta() meta {
	return meta{Name: c.Name, Namespace: c.Namespace, Labels: c.labels()}
}

func (c Config) labels() map[string]string {
	return map[string]string{nameLabel: "llmrun", instanceLabel: c.Name}
}

// fileKey is the ConfigMap key of the i-th file: keys allow only
// letters, digits, '-', '_' and '.', so the path is mapped to its key by
// the volume's items.
func fileKey(i int) string { return "file-" + strconv.Itoa(i) }

func (c Config) configMap() configMap {
	cm := configMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: c.meta()}
	for i, f := range c.Files {
		if utf8.Valid(f.Data) {
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[fileKey(i)] = string(f.Data)
			continue
		}
		if cm.BinaryData == nil {
			cm.BinaryData = map[string][]byte{}
		}
		cm.BinaryData[fileKey(i)] = f.Data
	}
	return cm
}

func (c Config) service() service {
	return service{APIVersion: "v1", Kind: "Service", Metadata: c.meta(), Spec: serviceSpec{
		ClusterIP: "None",
		Selector:  c.labels(),
		// The instances meet before any pod is ready: instance 0's name
		// must resolve as soon as its pod has an address.
		PublishNotReadyAddresses: true,
		Ports:                    []servicePort{{Name: "rendezvous", Port: RendezvousPort, TargetPort: RendezvousPort, Protocol: "TCP"}},
	}}
}

func (c Config) job() job {
	items := make([]keyPath, len(c.Files))
	for i, f := range c.Files {
		items[i] = keyPath{Key: fileKey(i), Path: f.Path}
	}
	env := []envVar{{Name: "POD_NAMESPACE", ValueFrom: &envVarSource{FieldRef: &fieldRef{FieldPath: "metadata.namespace"}}}}
	for _, v := range rendezvous.PodEnv(c.Instances, c.rendezvous()) {
		env = append(env, envVar{Name: v.Name, Value: v.Value})
	}
	env = append(env, envVar{Name: "HOME", Value: HomeDir}, envVar{Name: "TMPDIR", Value: TempDir})
	// check() refused a memory that does not parse.
	memLimit, _ := c.Resources.goMemLimit()
	env = append(env, envVar{Name: "GOMEMLIMIT", Value: memLimit})
	// Not optional: a misnamed Secret or key keeps the pods from starting
	// (CreateContainerConfigError), rather than sending requests without
	// a key.
	for _, name := range c.SecretEnv {
		env = append(env, envVar{Name: name, ValueFrom: &envVarSource{SecretKeyRef: &secretKeyRef{Name: c.Secret, Key: name}}})
	}
	workDir := MountDir
	if c.WorkDir != "." && c.WorkDir != "" {
		workDir += "/" + c.WorkDir
	}
	return job{APIVersion: "batch/v1", Kind: "Job", Metadata: c.meta(), Spec: jobSpec{
		CompletionMode: "Indexed",
		Completions:    c.Instances,
		Parallelism:    c.Instances,
		// A failed instance is a result (the merge names it missing), not
		// something to retry behind the user's back.
		BackoffLimit:            0,
		ActiveDeadlineSeconds:   wholeSeconds(c.ActiveDeadline),
		TTLSecondsAfterFinished: wholeSeconds(c.TTLAfterFinished),
		Template: podTemplate{Metadata: podMeta{Labels: c.labels()}, Spec: podSpec{
			// With a subdomain, a pod of an Indexed Job is named NAME-INDEX
			// under the Service: instance 0 is NAME-0.NAME.
			Subdomain:     c.Name,
			RestartPolicy: "Never",
			// llmrun does not talk to the Kubernetes API.
			AutomountServiceAccountToken: false,
			// With the container's, what Pod Security's "restricted"
			// level requires.
			SecurityContext: podSecurityContext{RunAsNonRoot: true, SeccompProfile: seccompProfile{Type: "RuntimeDefault"}},
			// One node's CPU, network or noisy neighbour would otherwise
			// weigh on several instances at once; preferred, so that a
			// cluster of fewer nodes still runs them all.
			TopologySpreadConstraints: []topologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: "ScheduleAnyway",
				LabelSelector: labelSelector{MatchLabels: c.labels()},
			}},
			Containers: []container{{
				Name:       "llmrun",
				Image:      c.Image,
				Args:       escapeArgs(c.Args),
				WorkingDir: workDir,
				Env:        env,
				Ports:      []containerPort{{Name: "rendezvous", ContainerPort: RendezvousPort, Protocol: "TCP"}},
				Resources: resources{
					Requests: map[string]string{"cpu": c.Resources.CPU, "memory": c.Resources.Memory},
					Limits:   map[string]string{"memory": c.Resources.Memory},
				},
				VolumeMounts: []volumeMount{
					{Name: "files", MountPath: MountDir, ReadOnly: true},
					{Name: "home", MountPath: HomeDir},
					{Name: "tmp", MountPath: TempDir},
				},
				SecurityContext: securityContext{
					RunAsNonRoot: true, AllowPrivilegeEscalation: false, ReadOnlyRootFilesystem: true, Capabilities: capabilities{Drop: []string{"ALL"}},
				},
			}},
			Volumes: []volume{
				{Name: "files", ConfigMap: &configMapVolume{Name: c.Name, Items: items}},
				{Name: "home", EmptyDir: &emptyDirVolume{SizeLimit: ScratchSize}},
				{Name: "tmp", EmptyDir: &emptyDirVolume{SizeLimit: ScratchSize}},
			},
		}},
	}}
}

// wholeSeconds is d in seconds, rounded up.
func wholeSeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}

// escapeArgs writes args so that Kubernetes passes them as they are: it
// expands $(NAME) in a container's args from its environment, and reads
// $$ as a $ that expands nothing.
func escapeArgs(args []string) []string {
	escaped := make([]string, len(args))
	for i, a := range args {
		escaped[i] = strings.ReplaceAll(a, "$", "$$")
	}
	return escaped
}
