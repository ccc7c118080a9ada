package secretsmanager

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mcpfn/mcpfn/core"
)

// SecretValue is the format of the secret's SecretString: a JSON object
// whose "key" is the HMAC key in standard base64 (with padding), at least
// core.MinKeyBytes bytes long:
//
//	{"key":"q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA="}
//
// Other members are ignored. Its zero value holds no key.
type SecretValue struct {
	Key []byte `json:"key"`
}

// LogValue redacts the key.
func (v SecretValue) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("key_bytes", len(v.Key)), slog.String("key", "REDACTED"))
}

// NewSecretValue returns a value with a fresh random key of
// core.MinKeyBytes bytes.
func NewSecretValue() SecretValue {
	b := make([]byte, core.MinKeyBytes)
	rand.Read(b)
	return SecretValue{Key: b}
}

// NewSecretString returns the SecretString of a fresh random key, to pass
// to `aws secretsmanager put-secret-value --secret-string`, or to Terraform.
func NewSecretString() string {
	b, _ := json.Marshal(NewSecretValue()) // cannot fail
	return string(b)
}

// ParseSecretString decodes a SecretString in the format of SecretValue. It
// returns an error for anything else, and for a key shorter than
// core.MinKeyBytes; the error never contains the secret.
func ParseSecretString(s string) (SecretValue, error) {
	var v SecretValue
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se), errors.As(err, &te):
			return SecretValue{}, errors.New(`not a JSON object of the form {"key":"<base64>"}`)
		default: // base64 errors; json's message quotes no input
			return SecretValue{}, fmt.Errorf(`"key" is not standard base64: %v`, err)
		}
	}
	if len(v.Key) < core.MinKeyBytes {
		return SecretValue{}, fmt.Errorf(`"key" has %d bytes, at least %d required`, len(v.Key), core.MinKeyBytes)
	}
	return v, nil
}

// KeyID returns the id of the key held by the secret version versionID,
// which travels in every sealed state. It is the version id itself when that
// is a valid key id (1 to 64 characters of A-Z, a-z, 0-9, '_' and '-', as
// the UUIDs Secrets Manager assigns are); otherwise "h" followed by the
// unpadded base64url SHA-256 of the version id (44 characters).
func KeyID(versionID string) string {
	if validKeyID(versionID) {
		return versionID
	}
	sum := sha256.Sum256([]byte(versionID))
	return "h" + base64.RawURLEncoding.EncodeToString(sum[:])
}

func validKeyID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
