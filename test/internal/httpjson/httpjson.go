// Package httpjson makes the JSON calls of the test module's programs and
// tests to the HTTP endpoints of their helper processes (smfake's admin
// endpoint, a test Worker's /call).
package httpjson

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
)

// Post sends body to url with POST and decodes the JSON answer, whatever
// its status, into out; it returns the answer's status code.
func Post(ctx context.Context, url string, body io.Reader, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(out)
}
