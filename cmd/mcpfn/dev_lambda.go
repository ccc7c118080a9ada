package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpfn/mcpfn/lambdalocal"
)

// The Lambda target of mcpfn dev: the user's bootstrap, built for this
// machine, run by lambdalocal behind a Function URL door in invoke mode
// RESPONSE_STREAM, with what the mcp-lambda Terraform module gives the
// function around it.

const (
	// devLambdaConcurrency is how many invocations the function's one
	// process runs at once (AWS_LAMBDA_MAX_CONCURRENCY, as on Lambda
	// Managed Instances): one process, so that in-memory sessions serve
	// every request, and enough room for open SSE streams.
	devLambdaConcurrency = 32
	// devLambdaTimeout is the function timeout: the mcp-lambda module's
	// default.
	devLambdaTimeout = 60 * time.Second
	// dynaliteVersion is the dynalite -dynalite runs with npx: the one the
	// test suite pins (test/dynalite/start.sh).
	dynaliteVersion = "4.0.0"
)

type lambdaTarget struct {
	s       *devSession
	name    string
	env     []string
	log     *slog.Logger
	current atomic.Pointer[lambdalocal.Function] // what the Invoke API invokes
	api     *lambdalocal.InvokeAPI
	servers []*http.Server
	store   *program // dynalite, when -dynalite started one
}

// lambdaName reduces s to a Lambda function name: letters, digits,
// hyphens and underscores, at most 64.
func lambdaName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	n := strings.Trim(b.String(), "-")
	if len(n) > 64 {
		n = n[:64]
	}
	if n == "" {
		n = "function"
	}
	return n
}

// newLambdaTarget starts the services the function reaches: a Secrets
// Manager endpoint holding its key secret, the Invoke API of the function,
// and with -dynalite the session table.
func newLambdaTarget(ctx context.Context, s *devSession) (devTarget, error) {
	t := &lambdaTarget{s: s, name: lambdaName(filepath.Base(s.pkg.Dir))}
	t.log = slog.New(slog.NewTextHandler(s.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	secret := "mcpfn-dev/" + t.name + "/state-keys"
	smURL, err := t.serve(lambdalocal.NewSecretsManager(map[string]string{secret: lambdalocal.NewKeySecret()}))
	if err != nil {
		return nil, err
	}
	t.api = lambdalocal.NewInvokeAPI(t.name, t, t.log)
	apiURL, err := t.serve(t.api)
	if err != nil {
		t.close()
		return nil, err
	}
	var unset []string
	for _, kv := range s.environ {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			unset = append(unset, k) // no real credentials, profiles or endpoints reach the function
		}
	}
	unset = append(unset, "MCPFN_STATE_KEY", "MCPFN_KEYS_SECRET_ID", "MCPFN_DYNAMODB_TABLE", "MCPFN_STREAMING")
	set := []string{
		// Lambda's own, with dummy credentials the local endpoints accept.
		"AWS_REGION=" + lambdalocal.DefaultRegion, "AWS_ACCESS_KEY_ID=mcpfn-dev", "AWS_SECRET_ACCESS_KEY=mcpfn-dev",
		// The mcp-lambda module's.
		"MCPFN_STREAMING=1", "MCPFN_KEYS_SECRET_ID=" + secret,
		// The local endpoints in place of AWS's.
		"AWS_ENDPOINT_URL_SECRETS_MANAGER=" + smURL, "AWS_ENDPOINT_URL_LAMBDA=" + apiURL,
	}
	if s.opts.dynalite {
		endpoint, table, err := t.startStore(ctx)
		if err != nil {
			t.close()
			return nil, err
		}
		set = append(set, "MCPFN_DYNAMODB_TABLE="+table, "AWS_ENDPOINT_URL_DYNAMODB="+endpoint)
		fmt.Fprintf(s.stderr, "mcpfn dev: sessions and tasks in the table %s at %s\n", table, endpoint)
	}
	t.env = withEnv(s.environ, unset, set...)
	return t, nil
}

// serve serves h on a loopback port until close, and returns its URL.
func (t *lambdaTarget) serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	t.servers = append(t.servers, srv)
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), nil
}

// Invoke runs an invocation of the Invoke API on the function that
// serves.
func (t *lambdaTarget) Invoke(ctx context.Context, event []byte) (*lambdalocal.Response, error) {
	fn := t.current.Load()
	if fn == nil {
		return nil, errors.New("no build of the function serves yet")
	}
	return fn.Invoke(ctx, event)
}

func (t *lambdaTarget) build(ctx context.Context, out string, diag io.Writer) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// As package lambda builds it, for this machine.
	return t.s.goBuild(ctx, filepath.Join(out, "bootstrap"), diag, []string{"CGO_ENABLED=0"}, "-tags", "lambda.norpc")
}

// lambdaInstance is a running build: its function behind its door.
type lambdaInstance struct {
	*lambdalocal.Door
	fn *lambdalocal.Function
}

func (i *lambdaInstance) stop() { i.fn.Close() }

func (t *lambdaTarget) start(ctx context.Context, artefact string) (devInstance, error) {
	fn, err := lambdalocal.NewFunction(lambdalocal.Config{
		Bootstrap: filepath.Join(artefact, "bootstrap"), Name: t.name, Env: t.env,
		Concurrency: devLambdaConcurrency, Timeout: devLambdaTimeout, Output: t.s.stderr, Logger: t.log,
	})
	if err != nil {
		return nil, err
	}
	// Start the function now, so that an init error shows, and the last
	// good build goes on serving.
	wctx, cancel := context.WithTimeout(ctx, devStartTimeout)
	defer cancel()
	if err := fn.Warm(wctx); err != nil {
		fn.Close()
		return nil, err
	}
	t.current.Store(fn)
	door := &lambdalocal.Door{Function: fn, Integration: lambdalocal.FunctionURL, Mode: lambdalocal.Streaming,
		Timeout: devLambdaTimeout, Logger: t.log}
	return &lambdaInstance{Door: door, fn: fn}, nil
}

func (t *lambdaTarget) close() {
	if t.api != nil {
		t.api.Close()
	}
	for _, srv := range t.servers {
		srv.Close()
	}
	if t.store != nil {
		t.store.stop()
	}
}

// mktableMain creates the session table with the user's own store/dynamo
// (deploy/lambdaenv's dependency): the schema the function expects.
const mktableMain = `// Code generated by mcpfn dev; DO NOT EDIT.

// Command mktable creates the session table of store/dynamo named by its
// argument at AWS_ENDPOINT_URL_DYNAMODB.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/mcpfn/mcpfn/store/dynamo"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := dynamodb.New(dynamodb.Options{
		Region:       os.Getenv("AWS_REGION"),
		BaseEndpoint: aws.String(os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")),
		Credentials:  credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), ""),
	})
	if err := dynamo.CreateTable(ctx, db, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`

// startStore returns the DynamoDB endpoint of -dynalite (that of
// AWS_ENDPOINT_URL_DYNAMODB, else a dynalite it starts with npx) and a
// fresh session table there.
func (t *lambdaTarget) startStore(ctx context.Context) (endpoint, table string, err error) {
	s := t.s
	endpoint = getenv(s.environ, "AWS_ENDPOINT_URL_DYNAMODB")
	if endpoint == "" {
		npx := lookPathIn(s.environ, "npx")
		if npx == "" {
			return "", "", errors.New("-dynalite runs dynalite with npx, which is not on PATH: install Node.js, or set AWS_ENDPOINT_URL_DYNAMODB to a DynamoDB-compatible endpoint (DynamoDB Local, LocalStack)")
		}
		port, err := freeLoopbackPort()
		if err != nil {
			return "", "", err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		cmd := exec.Command(npx, "--yes", "dynalite@"+dynaliteVersion, "--port", strconv.Itoa(port), "--host", "127.0.0.1")
		cmd.Env = s.environ
		fmt.Fprintf(s.stderr, "mcpfn dev: starting dynalite@%s with npx\n", dynaliteVersion)
		if t.store, err = startProgram(cmd, s.stderr, "[dynalite] ", s.exitNotice("dynalite")); err != nil {
			return "", "", err
		}
		if err := t.store.waitListening(ctx, addr); err != nil {
			return "", "", fmt.Errorf("dynalite: %w", err)
		}
		endpoint = "http://" + addr
	}
	b := make([]byte, 4)
	rand.Read(b)
	table = "mcpfn-dev-" + t.name + "-" + hex.EncodeToString(b)
	mktable := filepath.Join(s.tmp, "mktable")
	var diag bytes.Buffer
	if err := s.overlayBuild(ctx, "mktable", mktableMain, mktable, &diag, nil); err != nil {
		return "", "", fmt.Errorf("-dynalite creates the table with the module's store/dynamo (a dependency of deploy/lambdaenv): %v\n%s", err, diag.Bytes())
	}
	cctx, cancel := context.WithTimeout(ctx, devStartTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, mktable, table)
	cmd.Env = withEnv(s.environ, nil, "AWS_REGION="+lambdalocal.DefaultRegion, "AWS_ACCESS_KEY_ID=mcpfn-dev",
		"AWS_SECRET_ACCESS_KEY=mcpfn-dev", "AWS_ENDPOINT_URL_DYNAMODB="+endpoint)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("creating the table %s at %s: %v\n%s", table, endpoint, err, out)
	}
	return endpoint, table, nil
}
