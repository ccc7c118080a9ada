package core

import (
	"errors"
	"net/http"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// serveBatch handles a JSON-RPC batch, which only 2025-03-26 allows.
func (s *Server) serveBatch(w http.ResponseWriter, hr *http.Request, body []byte, acc acceptance) {
	ctx := hr.Context()
	x := newExchange(w, acceptance{json: true})
	if !s.servesLegacy() || s.opts.Mode == ModeModern {
		s.replyError(ctx, x, nil, invalidRequest("batches are not supported"), eraLegacy)
		return
	}
	sess, version, err := s.sessionFor(ctx, hr)
	if err != nil {
		s.replyError(ctx, x, nil, err, eraLegacy)
		return
	}
	if version != ProtocolVersion20250326 {
		s.replyError(ctx, x, nil, invalidRequest("batches are only allowed in protocol version "+ProtocolVersion20250326), eraLegacy)
		return
	}
	var elems [][]byte
	i := jsonwire.SkipSpace(body, jsonwire.SkipSpace(body, 0)+1)
	for i < len(body) && body[i] != ']' {
		end := jsonwire.SkipValue(body, i)
		elems = append(elems, body[i:end])
		i = jsonwire.SkipSpace(body, end)
		if i < len(body) && body[i] == ',' {
			i = jsonwire.SkipSpace(body, i+1)
		}
	}
	if len(elems) == 0 {
		s.replyError(ctx, x, nil, invalidRequest("empty batch"), eraLegacy)
		return
	}
	if sess != nil {
		x.header = sessionHeader(sess.rec.ID)
	}
	if err := s.authorizeBatch(ctx, elems, version); err != nil {
		s.replyError(ctx, x, nil, err, eraLegacy)
		return
	}
	quiet := &exchange{acc: acceptance{json: true}} // no stream inside a batch
	var out [][]byte
	for _, e := range elems {
		m, id, perr := parseMessage(e)
		switch {
		case perr != nil:
			out = append(out, appendErrorResponse(nil, id, toWireError(perr)))
		case m.isResponse:
			s.deliverAnswer(ctx, sess, m)
		case m.method == "initialize":
			if !m.isNotification() {
				out = append(out, appendErrorResponse(nil, m.id, toWireError(invalidRequest("initialize must not be part of a batch"))))
			}
		case m.isNotification():
			s.legacyNotification(ctx, sess, m)
		default:
			res, err := s.legacyRequest(ctx, hr, quiet, m, sess, version, nil)
			if errors.Is(err, errCancelledByClient) {
				continue // no response for a cancelled request
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					s.log.ErrorContext(ctx, "request failed", "error", err.Error())
				}
				out = append(out, appendErrorResponse(nil, m.id, toWireError(err)))
			} else {
				out = append(out, jsonwire.AppendResult(nil, m.id, res))
			}
		}
	}
	if len(out) == 0 {
		x.accepted()
		return
	}
	b := []byte{'['}
	for i, o := range out {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, o...)
	}
	x.finish(http.StatusOK, append(b, ']'))
}
