// Package smfake serves the AWS Secrets Manager wire protocol on loopback
// for tests: no Secrets Manager emulator exists, and store/secretsmanager
// must be tested through the real SDK client. It keeps secrets, their
// versions and staging labels in memory (optionally in a state file), and
// adds admin endpoints with which a test rotates a secret mid-run.
//
// # Wire protocol
//
// AWS JSON 1.1: POST / with Content-Type application/x-amz-json-1.1,
// X-Amz-Target: secretsmanager.<Operation>, a signed request (the signature
// is not checked, its presence is), and a JSON body. Implemented operations:
//
//	DescribeSecret            SecretId -> Name, ARN, VersionIdsToStages
//	GetSecretValue            SecretId, VersionId or VersionStage (default AWSCURRENT)
//	PutSecretValue            SecretId, SecretString, ClientRequestToken, VersionStages (default AWSCURRENT)
//	UpdateSecretVersionStage  SecretId, VersionStage, MoveToVersionId, RemoveFromVersionId
//
// Errors are AWS JSON errors ({"__type":"ResourceNotFoundException",...}).
// Staging labels behave as in Secrets Manager: a label sits on at most one
// version, and when AWSCURRENT moves, AWSPREVIOUS moves to the version that
// was current.
//
// # Admin endpoints
//
// Secret values ("{"key":"<base64>"}", the format of store/secretsmanager)
// are generated here and never returned by these endpoints:
//
//	POST /_admin/rotate?secret=NAME[&stage=AWSPENDING]   new version with a new random key, staged
//	                                                     AWSCURRENT (old current -> AWSPREVIOUS) or as given
//	POST /_admin/promote?secret=NAME                     AWSCURRENT moves to the AWSPENDING version
//	POST /_admin/retire-previous?secret=NAME             the AWSPREVIOUS version is deleted
//	GET  /_admin/stages?secret=NAME                      {"versions":{"<id>":["AWSCURRENT"],...}}
//
// secret may be omitted when the server holds one secret. Each answers
// {"versionId":"<the version concerned>","versions":{...}}.
package smfake

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// The staging labels Secrets Manager manages.
const (
	StageCurrent  = "AWSCURRENT"
	StagePending  = "AWSPENDING"
	StagePrevious = "AWSPREVIOUS"
)

// Server is an http.Handler speaking Secrets Manager. The zero value is not
// usable; build one with New or Open. It is safe for concurrent use.
type Server struct {
	// Unexpected, when set, is called for every request that does not
	// follow the wire protocol (tests pass t.Errorf).
	Unexpected func(format string, args ...any)

	mu       sync.Mutex
	path     string // state file, "" for none
	secrets  map[string]*secret
	requests map[string]int // by operation
	holds    map[string]hold
}

type hold struct {
	gate    <-chan struct{}
	entered chan<- struct{}
}

type secret struct {
	Name     string              `json:"name"`
	Versions map[string]*version `json:"versions"`
}

type version struct {
	Value   string    `json:"value"`
	Stages  []string  `json:"stages"`
	Created time.Time `json:"created"`
}

// New returns an empty server that keeps its state in memory.
func New() *Server {
	return &Server{secrets: map[string]*secret{}, requests: map[string]int{}, holds: map[string]hold{}}
}

// Open returns a server whose state lives in the file path: loaded from it
// when it exists, written to it (mode 0600: it holds the keys) after every
// change.
func Open(path string) (*Server, error) {
	s := New()
	s.path = path
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, err
	}
	if err := json.Unmarshal(b, &s.secrets); err != nil {
		return nil, fmt.Errorf("smfake: state file %s: %w", path, err)
	}
	for name, sec := range s.secrets {
		if sec == nil || sec.Versions == nil {
			return nil, fmt.Errorf("smfake: state file %s: secret %q has no versions", path, name)
		}
	}
	return s, nil
}

// saveLocked writes the state file, if any.
func (s *Server) saveLocked() error {
	if s.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(s.secrets, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".smfake-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}

// NewVersionID returns a random UUID, as Secrets Manager assigns to versions.
func NewVersionID() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// NewKeyValue returns a SecretString in store/secretsmanager's format
// holding a fresh random 32-byte key.
func NewKeyValue() string {
	b := make([]byte, 32)
	rand.Read(b)
	return `{"key":"` + base64.StdEncoding.EncodeToString(b) + `"}`
}

// ARN returns the ARN the server reports for the secret name.
func ARN(name string) string {
	return "arn:aws:secretsmanager:us-east-1:123456789012:secret:" + name + "-AbCdEf"
}

// Client returns an SDK client of the server at url, with dummy credentials
// and no retries.
func Client(url string) *awssm.Client {
	return awssm.New(ClientOptions(url))
}

// ClientOptions returns the options of Client, for a client that needs
// more of them set (an HTTPClient of its own).
func ClientOptions(url string) awssm.Options {
	return awssm.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "test-secret", Source: "smfake"}, nil
		}),
		RetryMaxAttempts: 1,
	}
}

// Put adds a version as put-secret-value does, creating the secret if
// needed: each stage (AWSCURRENT when none is given) moves to it, and when
// AWSCURRENT moves, AWSPREVIOUS moves to the version that was current.
func (s *Server) Put(name, versionID, value string, stages ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putLocked(name, versionID, value, stages...)
	return s.saveLocked()
}

func (s *Server) putLocked(name, versionID, value string, stages ...string) {
	sec := s.secrets[name]
	if sec == nil {
		sec = &secret{Name: name, Versions: map[string]*version{}}
		s.secrets[name] = sec
	}
	if len(stages) == 0 {
		stages = []string{StageCurrent}
	}
	sec.Versions[versionID] = &version{Value: value, Created: time.Now().UTC()}
	for _, st := range stages {
		moveStage(sec, st, versionID)
	}
}

// MoveStage moves a staging label to a version, as
// update-secret-version-stage does.
func (s *Server) MoveStage(name, stage, versionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.find(name)
	if sec == nil || sec.Versions[versionID] == nil {
		return fmt.Errorf("smfake: no version %s of secret %s", versionID, name)
	}
	moveStage(sec, stage, versionID)
	return s.saveLocked()
}

func moveStage(sec *secret, stage, to string) {
	from := ""
	for id, v := range sec.Versions {
		if i := slices.Index(v.Stages, stage); i >= 0 {
			v.Stages = slices.Delete(v.Stages, i, i+1)
			from = id
		}
	}
	if to != "" {
		sec.Versions[to].Stages = append(sec.Versions[to].Stages, stage)
	}
	if stage == StageCurrent && from != "" && from != to {
		moveStage(sec, StagePrevious, from)
	}
}

// Rotate adds a version holding a new random key, staged AWSCURRENT (the
// old current version becomes AWSPREVIOUS) or with the given stages (say
// AWSPENDING, the first step of a two-step rotation). It returns the new
// version id.
func (s *Server) Rotate(name string, stages ...string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.find(name) == nil {
		return "", fmt.Errorf("smfake: no secret %s", name)
	}
	id := NewVersionID()
	s.putLocked(name, id, NewKeyValue(), stages...)
	return id, s.saveLocked()
}

// Promote moves AWSCURRENT to the AWSPENDING version and removes
// AWSPENDING from it, as the last step of a rotation does; the version that
// was current becomes AWSPREVIOUS. It returns the promoted version id.
func (s *Server) Promote(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.find(name)
	if sec == nil {
		return "", fmt.Errorf("smfake: no secret %s", name)
	}
	id := stagedLocked(sec, StagePending)
	if id == "" {
		return "", fmt.Errorf("smfake: secret %s has no %s version", name, StagePending)
	}
	moveStage(sec, StageCurrent, id)
	moveStage(sec, StagePending, "")
	return id, s.saveLocked()
}

// RetirePrevious deletes the AWSPREVIOUS version, so that its key no longer
// verifies anywhere once instances refresh. It returns the deleted version
// id.
func (s *Server) RetirePrevious(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.find(name)
	if sec == nil {
		return "", fmt.Errorf("smfake: no secret %s", name)
	}
	id := stagedLocked(sec, StagePrevious)
	if id == "" {
		return "", fmt.Errorf("smfake: secret %s has no %s version", name, StagePrevious)
	}
	delete(sec.Versions, id)
	return id, s.saveLocked()
}

// Staged returns the id of the version of secret name that carries stage,
// or "".
func (s *Server) Staged(name, stage string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sec := s.find(name); sec != nil {
		return stagedLocked(sec, stage)
	}
	return ""
}

func stagedLocked(sec *secret, stage string) string {
	for id, v := range sec.Versions {
		if slices.Contains(v.Stages, stage) {
			return id
		}
	}
	return ""
}

// Stages returns the staging labels of every version of secret name that
// has any (as DescribeSecret reports them).
func (s *Server) Stages(name string) map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sec := s.find(name); sec != nil {
		return stagesLocked(sec)
	}
	return nil
}

func stagesLocked(sec *secret) map[string][]string {
	out := map[string][]string{}
	for id, v := range sec.Versions {
		if len(v.Stages) > 0 {
			st := slices.Clone(v.Stages)
			sort.Strings(st)
			out[id] = st
		}
	}
	return out
}

// Count returns the number of requests of the operation op (say
// "DescribeSecret") served so far.
func (s *Server) Count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[op]
}

// Hold makes every request of the operation op wait until gate is closed,
// after sending a value on entered (which should be buffered); a nil gate
// stops holding.
func (s *Server) Hold(op string, gate <-chan struct{}, entered chan<- struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gate == nil {
		delete(s.holds, op)
		return
	}
	s.holds[op] = hold{gate, entered}
}

// find returns the secret with the given name or ARN; s.mu is held.
func (s *Server) find(id string) *secret {
	if sec := s.secrets[id]; sec != nil {
		return sec
	}
	for _, c := range s.secrets {
		if ARN(c.Name) == id {
			return c
		}
	}
	return nil
}

func fail(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
}

// ServeHTTP serves the wire protocol on / and the admin endpoints under
// /_admin/.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_admin/") {
		s.serveAdmin(w, r)
		return
	}
	target := r.Header.Get("X-Amz-Target")
	if r.Method != http.MethodPost || r.URL.Path != "/" || r.Header.Get("Content-Type") != "application/x-amz-json-1.1" ||
		r.Header.Get("Authorization") == "" || !strings.HasPrefix(target, "secretsmanager.") {
		if s.Unexpected != nil {
			s.Unexpected("smfake: unexpected request: %s %s Content-Type %q X-Amz-Target %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"), target)
		}
		fail(w, http.StatusBadRequest, "SerializationException", "bad request")
		return
	}
	op := strings.TrimPrefix(target, "secretsmanager.")
	var in struct {
		SecretID            string   `json:"SecretId"`
		VersionID           string   `json:"VersionId"`
		VersionStage        string   `json:"VersionStage"`
		SecretString        *string  `json:"SecretString"`
		ClientRequestToken  string   `json:"ClientRequestToken"`
		VersionStages       []string `json:"VersionStages"`
		MoveToVersionID     string   `json:"MoveToVersionId"`
		RemoveFromVersionID string   `json:"RemoveFromVersionId"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fail(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	s.mu.Lock()
	s.requests[op]++
	h, held := s.holds[op]
	s.mu.Unlock()
	if held {
		if h.entered != nil {
			h.entered <- struct{}{}
		}
		<-h.gate
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.find(in.SecretID)
	if sec == nil {
		fail(w, http.StatusBadRequest, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
		return
	}
	var out any
	switch op {
	case "DescribeSecret":
		out = map[string]any{"ARN": ARN(sec.Name), "Name": sec.Name, "VersionIdsToStages": stagesLocked(sec)}
	case "GetSecretValue":
		id, stage := in.VersionID, in.VersionStage
		if id == "" && stage == "" {
			stage = StageCurrent
		}
		if id == "" {
			id = stagedLocked(sec, stage)
		}
		v := sec.Versions[id]
		if v == nil || (stage != "" && !slices.Contains(v.Stages, stage)) {
			fail(w, http.StatusBadRequest, "ResourceNotFoundException",
				fmt.Sprintf("Secrets Manager can't find the specified secret value for VersionId: %s", id))
			return
		}
		out = map[string]any{"ARN": ARN(sec.Name), "Name": sec.Name, "VersionId": id,
			"SecretString": v.Value, "VersionStages": v.Stages, "CreatedDate": float64(v.Created.Unix())}
	case "PutSecretValue":
		if in.SecretString == nil {
			fail(w, http.StatusBadRequest, "InvalidParameterException", "SecretString is required")
			return
		}
		id := in.ClientRequestToken
		if id == "" {
			id = NewVersionID()
		}
		if v := sec.Versions[id]; v != nil {
			if v.Value != *in.SecretString {
				fail(w, http.StatusBadRequest, "ResourceExistsException", "a version with this ClientRequestToken already exists")
				return
			}
		} else {
			s.putLocked(sec.Name, id, *in.SecretString, in.VersionStages...)
		}
		out = map[string]any{"ARN": ARN(sec.Name), "Name": sec.Name, "VersionId": id, "VersionStages": sec.Versions[id].Stages}
	case "UpdateSecretVersionStage":
		if in.VersionStage == "" || (in.MoveToVersionID != "" && sec.Versions[in.MoveToVersionID] == nil) {
			fail(w, http.StatusBadRequest, "InvalidParameterException", "VersionStage and an existing MoveToVersionId are required")
			return
		}
		if in.RemoveFromVersionID != "" {
			if v := sec.Versions[in.RemoveFromVersionID]; v == nil || !slices.Contains(v.Stages, in.VersionStage) {
				fail(w, http.StatusBadRequest, "InvalidParameterException", "the stage is not on RemoveFromVersionId")
				return
			}
		}
		moveStage(sec, in.VersionStage, in.MoveToVersionID)
		out = map[string]any{"ARN": ARN(sec.Name), "Name": sec.Name}
	default:
		if s.Unexpected != nil {
			s.Unexpected("smfake: unsupported operation %s", op)
		}
		fail(w, http.StatusBadRequest, "UnknownOperationException", "unsupported operation "+target)
		return
	}
	if err := s.saveLocked(); err != nil {
		fail(w, http.StatusInternalServerError, "InternalServiceError", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	json.NewEncoder(w).Encode(out)
}

func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("secret")
	if name == "" {
		s.mu.Lock()
		if len(s.secrets) == 1 {
			for n := range s.secrets {
				name = n
			}
		}
		s.mu.Unlock()
	}
	var id string
	var err error
	op := strings.TrimPrefix(r.URL.Path, "/_admin/")
	switch {
	case op == "stages" && r.Method == http.MethodGet:
		if s.Stages(name) == nil {
			err = fmt.Errorf("smfake: no secret %q", name)
		}
	case op == "rotate" && r.Method == http.MethodPost:
		var stages []string
		if st := r.URL.Query().Get("stage"); st != "" {
			stages = []string{st}
		}
		id, err = s.Rotate(name, stages...)
	case op == "promote" && r.Method == http.MethodPost:
		id, err = s.Promote(name)
	case op == "retire-previous" && r.Method == http.MethodPost:
		id, err = s.RetirePrevious(name)
	default:
		http.Error(w, "unknown admin endpoint "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusConflict)
		json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"versionId": id, "versions": s.Stages(name)})
}
