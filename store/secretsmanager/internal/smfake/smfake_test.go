package smfake_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpfn/mcpfn/store/secretsmanager"
	"github.com/mcpfn/mcpfn/store/secretsmanager/internal/smfake"
)

const name = "mcpfn/state-keys"

func admin(t *testing.T, url, op string) (string, map[string][]string) {
	t.Helper()
	method := http.MethodPost
	if op == "stages" {
		method = http.MethodGet
	}
	req, _ := http.NewRequest(method, url+"/_admin/"+op, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		VersionID string              `json:"versionId"`
		Versions  map[string][]string `json:"versions"`
		Error     string              `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: HTTP %d %v %s", method, op, resp.StatusCode, err, out.Error)
	}
	return out.VersionID, out.Versions
}

// describe reads the stages with the SDK, as store/secretsmanager does.
func describe(t *testing.T, c *awssm.Client) map[string][]string {
	t.Helper()
	out, err := c.DescribeSecret(context.Background(), &awssm.DescribeSecretInput{SecretId: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	return out.VersionIdsToStages
}

func TestAdminRotation(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	f, err := smfake.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	f.Unexpected = t.Errorf
	v1 := smfake.NewVersionID()
	if err := f.Put(name, v1, smfake.NewKeyValue()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(f)
	defer hs.Close()
	c := smfake.Client(hs.URL)

	v2, _ := admin(t, hs.URL, "rotate?stage=AWSPENDING")
	if got, want := describe(t, c), map[string][]string{v1: {"AWSCURRENT"}, v2: {"AWSPENDING"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after staging: %v, want %v", got, want)
	}
	if p, _ := admin(t, hs.URL, "promote"); p != v2 {
		t.Fatalf("promoted %s, want %s", p, v2)
	}
	if got, want := describe(t, c), map[string][]string{v1: {"AWSPREVIOUS"}, v2: {"AWSCURRENT"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after promotion: %v, want %v", got, want)
	}
	v3, _ := admin(t, hs.URL, "rotate")
	if got, want := describe(t, c), map[string][]string{v2: {"AWSPREVIOUS"}, v3: {"AWSCURRENT"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after a one-step rotation: %v, want %v", got, want)
	}
	if r, _ := admin(t, hs.URL, "retire-previous"); r != v2 {
		t.Fatalf("retired %s, want %s", r, v2)
	}
	_, stages := admin(t, hs.URL, "stages")
	if want := map[string][]string{v3: {"AWSCURRENT"}}; !reflect.DeepEqual(stages, want) {
		t.Fatalf("after retiring: %v, want %v", stages, want)
	}
	if _, err := c.GetSecretValue(context.Background(), &awssm.GetSecretValueInput{SecretId: aws.String(name), VersionId: aws.String(v2)}); err == nil {
		t.Fatal("the retired version is still readable")
	}

	// The values are in store/secretsmanager's format, and the state
	// survives a restart.
	keys, err := secretsmanager.New(c, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := keys.Keys(context.Background())
	if err != nil || len(k) != 1 || k[0].ID != v3 {
		t.Fatalf("keys %v, %v; want the one key of %s", k, err, v3)
	}
	again, err := smfake.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Stages(name); !reflect.DeepEqual(got, stages) {
		t.Fatalf("reloaded stages %v, want %v", got, stages)
	}
}

// TestWriteOperations rotates with the SDK's own calls, as the package doc
// of store/secretsmanager tells operators to.
func TestWriteOperations(t *testing.T) {
	t.Parallel()
	f := smfake.New()
	f.Unexpected = t.Errorf
	v1 := smfake.NewVersionID()
	f.Put(name, v1, smfake.NewKeyValue())
	hs := httptest.NewServer(f)
	defer hs.Close()
	c := smfake.Client(hs.URL)
	ctx := context.Background()
	out, err := c.PutSecretValue(ctx, &awssm.PutSecretValueInput{SecretId: aws.String(name),
		SecretString: aws.String(secretsmanager.NewSecretString()), VersionStages: []string{"AWSPENDING"}})
	if err != nil {
		t.Fatal(err)
	}
	v2 := aws.ToString(out.VersionId)
	if _, err := c.UpdateSecretVersionStage(ctx, &awssm.UpdateSecretVersionStageInput{SecretId: aws.String(name),
		VersionStage: aws.String("AWSCURRENT"), MoveToVersionId: aws.String(v2), RemoveFromVersionId: aws.String(v1)}); err != nil {
		t.Fatal(err)
	}
	if got, want := describe(t, c), map[string][]string{v1: {"AWSPREVIOUS"}, v2: {"AWSCURRENT", "AWSPENDING"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("stages %v, want %v", got, want)
	}
	if f.Count("PutSecretValue") != 1 || f.Count("DescribeSecret") != 1 {
		t.Errorf("counts: %d PutSecretValue, %d DescribeSecret", f.Count("PutSecretValue"), f.Count("DescribeSecret"))
	}
}
