package secretsmanager_test

import (
	"testing"

	awssm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/secretsmanager/internal/smfake"
)

// smServer is the Secrets Manager fake of package
// store/secretsmanager/internal/smfake (the AWS JSON 1.1 wire protocol,
// with versions and staging labels that a test rotates) served on an
// in-memory network, so that the tests of the refresh schedule run in a
// testing/synctest bubble (create it inside the bubble that uses it). No
// Secrets Manager emulator exists to test against.
type smServer struct {
	*smfake.Server
	net *mcptest.Network
}

const smEndpoint = "http://secretsmanager.test"

func newSMServer(t *testing.T) *smServer {
	f := smfake.New()
	f.Unexpected = t.Errorf
	s := &smServer{Server: f, net: mcptest.NewNetwork()}
	s.net.ServeURL(smEndpoint, f)
	t.Cleanup(s.net.Close)
	return s
}

// client returns a real SDK client pointed at the server.
func (s *smServer) client() *awssm.Client {
	o := smfake.ClientOptions(smEndpoint)
	o.HTTPClient = s.net.Client()
	return awssm.New(o)
}

// Close stops serving: later calls fail in transport.
func (s *smServer) Close() { s.net.Close() }

// put adds a version as put-secret-value does (see smfake.Server.Put).
func (s *smServer) put(name, versionID, value string, stages ...string) {
	if err := s.Put(name, versionID, value, stages...); err != nil {
		panic(err)
	}
}

// move moves a staging label to a version, as update-secret-version-stage
// does.
func (s *smServer) move(name, stage, versionID string) {
	if err := s.MoveStage(name, stage, versionID); err != nil {
		panic(err)
	}
}

// count returns the number of requests of an operation.
func (s *smServer) count(op string) int { return s.Count(op) }
