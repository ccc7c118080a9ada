package secretsmanager_test

import (
	"net/http/httptest"
	"testing"

	awssm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpfn/mcpfn/store/secretsmanager/internal/smfake"
)

// smServer is the Secrets Manager fake of package store/secretsmanager/internal/smfake (the AWS JSON
// 1.1 wire protocol on loopback, with versions and staging labels that a
// test rotates) behind an httptest.Server. No Secrets Manager emulator
// exists to test against.
type smServer struct {
	*smfake.Server
	hs *httptest.Server
}

func newSMServer(t *testing.T) *smServer {
	f := smfake.New()
	f.Unexpected = t.Errorf
	s := &smServer{Server: f, hs: httptest.NewServer(f)}
	t.Cleanup(s.hs.Close)
	return s
}

// client returns a real SDK client pointed at the server.
func (s *smServer) client() *awssm.Client { return smfake.Client(s.hs.URL) }

// Close stops serving: later calls fail in transport.
func (s *smServer) Close() { s.hs.Close() }

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
