package secretsmanager_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// smServer speaks the Secrets Manager wire protocol (AWS JSON 1.1: POST /,
// X-Amz-Target: secretsmanager.<Operation>) on loopback, for the operations
// DescribeSecret and GetSecretValue, with versions and staging labels that
// a test rotates. No Secrets Manager emulator exists to test against.
type smServer struct {
	*httptest.Server
	t *testing.T

	mu       sync.Mutex
	secrets  map[string]*secret
	requests map[string]int // by operation
	// gate, when set, holds every DescribeSecret until it is closed;
	// entered receives one value per DescribeSecret held.
	gate    chan struct{}
	entered chan struct{}
}

type secret struct {
	name     string
	versions map[string]*version
}

type version struct {
	value  string
	stages []string
}

func newSMServer(t *testing.T) *smServer {
	s := &smServer{t: t, secrets: map[string]*secret{}, requests: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// client returns a real SDK client pointed at the server.
func (s *smServer) client() *awssm.Client {
	return awssm.New(awssm.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(s.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDTEST", "test-secret", ""),
		RetryMaxAttempts: 1,
	})
}

func arn(name string) string {
	return "arn:aws:secretsmanager:us-east-1:123456789012:secret:" + name + "-AbCdEf"
}

// put adds a version as put-secret-value does: each stage (AWSCURRENT when
// none is given) moves to it, and when AWSCURRENT moves, AWSPREVIOUS moves
// to the version that was current.
func (s *smServer) put(name, versionID, value string, stages ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.secrets[name]
	if sec == nil {
		sec = &secret{name: name, versions: map[string]*version{}}
		s.secrets[name] = sec
	}
	if len(stages) == 0 {
		stages = []string{"AWSCURRENT"}
	}
	sec.versions[versionID] = &version{value: value}
	for _, st := range stages {
		s.moveStageLocked(sec, st, versionID)
	}
}

// move moves a staging label to a version, as update-secret-version-stage
// does.
func (s *smServer) move(name, stage, versionID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.moveStageLocked(s.secrets[name], stage, versionID)
}

func (s *smServer) moveStageLocked(sec *secret, stage, to string) {
	from := ""
	for id, v := range sec.versions {
		if i := slices.Index(v.stages, stage); i >= 0 {
			v.stages = slices.Delete(v.stages, i, i+1)
			from = id
		}
	}
	sec.versions[to].stages = append(sec.versions[to].stages, stage)
	if stage == "AWSCURRENT" && from != "" && from != to {
		s.moveStageLocked(sec, "AWSPREVIOUS", from)
	}
}

func (s *smServer) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[op]
}

func (s *smServer) fail(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
}

func (s *smServer) serve(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	if r.Method != http.MethodPost || r.URL.Path != "/" || r.Header.Get("Content-Type") != "application/x-amz-json-1.1" ||
		r.Header.Get("Authorization") == "" {
		s.t.Errorf("unexpected request: %s %s Content-Type %q X-Amz-Target %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"), target)
		s.fail(w, http.StatusBadRequest, "SerializationException", "bad request")
		return
	}
	var in struct {
		SecretID     string `json:"SecretId"`
		VersionID    string `json:"VersionId"`
		VersionStage string `json:"VersionStage"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		s.fail(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	s.mu.Lock()
	s.requests[target]++
	gate, entered := s.gate, s.entered
	s.mu.Unlock()
	if target == "secretsmanager.DescribeSecret" && gate != nil {
		entered <- struct{}{}
		<-gate
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.secrets[in.SecretID]
	if sec == nil {
		for _, c := range s.secrets {
			if arn(c.name) == in.SecretID {
				sec = c
			}
		}
	}
	if sec == nil {
		s.fail(w, http.StatusBadRequest, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
		return
	}
	var out any
	switch target {
	case "secretsmanager.DescribeSecret":
		stages := map[string][]string{}
		for id, v := range sec.versions {
			if len(v.stages) > 0 {
				stages[id] = v.stages
			}
		}
		out = map[string]any{"ARN": arn(sec.name), "Name": sec.name, "VersionIdsToStages": stages}
	case "secretsmanager.GetSecretValue":
		id := in.VersionID
		stage := in.VersionStage
		if id == "" && stage == "" {
			stage = "AWSCURRENT"
		}
		if id == "" {
			for vid, v := range sec.versions {
				if slices.Contains(v.stages, stage) {
					id = vid
				}
			}
		}
		v := sec.versions[id]
		if v == nil || (stage != "" && !slices.Contains(v.stages, stage)) {
			s.fail(w, http.StatusBadRequest, "ResourceNotFoundException",
				fmt.Sprintf("Secrets Manager can't find the specified secret value for VersionId: %s", id))
			return
		}
		out = map[string]any{"ARN": arn(sec.name), "Name": sec.name, "VersionId": id,
			"SecretString": v.value, "VersionStages": v.stages, "CreatedDate": 1.7e9}
	default:
		s.fail(w, http.StatusBadRequest, "UnknownOperationException", "unsupported operation "+target)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	json.NewEncoder(w).Encode(out)
}
