package lambdalocal

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// SecretsManager is an http.Handler serving the read operations of AWS
// Secrets Manager (AWS JSON 1.1: POST / with X-Amz-Target:
// secretsmanager.<Operation>) for a fixed set of secrets, one version each,
// staged AWSCURRENT: enough for code that reads secrets with the AWS SDK
// (AWS_ENDPOINT_URL_SECRETS_MANAGER pointing here) to run unchanged, such
// as store/secretsmanager's key provider.
//
//	DescribeSecret     SecretId (name or ARN) -> Name, ARN, VersionIdsToStages
//	GetSecretValue     SecretId, VersionId or VersionStage (default AWSCURRENT)
//	                   -> Name, ARN, VersionId, SecretString, VersionStages
//
// Other operations are answered 400 UnknownOperationException, and an
// unknown secret 400 ResourceNotFoundException. The request must be signed
// (the signature is not checked, its presence is).
//
// Build one with NewSecretsManager. It is safe for concurrent use.
type SecretsManager struct {
	secrets map[string]smSecret // not changed once built
}

type smSecret struct {
	name, version, value string
	created              time.Time
}

// NewSecretsManager returns a SecretsManager holding the secrets, by name,
// each with one version whose SecretString is the value.
func NewSecretsManager(secrets map[string]string) *SecretsManager {
	s := &SecretsManager{secrets: map[string]smSecret{}}
	for name, value := range secrets {
		s.secrets[name] = smSecret{name: name, version: newUUID(), value: value, created: time.Now()}
	}
	return s
}

// SecretARN returns the ARN a SecretsManager reports for the secret name.
func SecretARN(name string) string {
	return "arn:aws:secretsmanager:" + DefaultRegion + ":" + accountID + ":secret:" + name + "-AbCdEf"
}

// NewKeySecret returns a secret value in the format of
// store/secretsmanager (the keys that seal requestState): a JSON object
// holding a fresh random 32-byte key in standard base64,
// {"key":"..."}.
func NewKeySecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return string(mustJSON(map[string]string{"key": base64.StdEncoding.EncodeToString(b)}))
}

// ServeHTTP serves the operations.
func (s *SecretsManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	if r.Method != http.MethodPost || r.URL.Path != "/" || !strings.HasPrefix(target, "secretsmanager.") {
		awsError(w, http.StatusBadRequest, "UnknownOperationException", "not a Secrets Manager request")
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		awsError(w, http.StatusBadRequest, "MissingAuthenticationTokenException", "missing authentication token")
		return
	}
	var in struct {
		SecretID     string `json:"SecretId"`
		VersionID    string `json:"VersionId"`
		VersionStage string `json:"VersionStage"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&in); err != nil {
		awsError(w, http.StatusBadRequest, "SerializationException", "the request body is not a JSON object")
		return
	}
	op := strings.TrimPrefix(target, "secretsmanager.")
	if op != "DescribeSecret" && op != "GetSecretValue" {
		awsError(w, http.StatusBadRequest, "UnknownOperationException", "unsupported operation "+op)
		return
	}
	sec, ok := s.secrets[in.SecretID]
	if !ok {
		for _, c := range s.secrets {
			if SecretARN(c.name) == in.SecretID {
				sec, ok = c, true
			}
		}
	}
	if !ok {
		awsError(w, http.StatusBadRequest, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
		return
	}
	var out any
	switch op {
	case "DescribeSecret":
		out = map[string]any{"ARN": SecretARN(sec.name), "Name": sec.name,
			"VersionIdsToStages": map[string][]string{sec.version: {"AWSCURRENT"}}}
	case "GetSecretValue":
		if (in.VersionID != "" && in.VersionID != sec.version) || (in.VersionStage != "" && in.VersionStage != "AWSCURRENT") {
			awsError(w, http.StatusBadRequest, "ResourceNotFoundException",
				"Secrets Manager can't find the specified secret value for VersionId: "+in.VersionID)
			return
		}
		out = map[string]any{"ARN": SecretARN(sec.name), "Name": sec.name, "VersionId": sec.version,
			"SecretString": sec.value, "VersionStages": []string{"AWSCURRENT"}, "CreatedDate": float64(sec.created.Unix())}
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Write(mustJSON(out))
}
