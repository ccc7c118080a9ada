// Command elicitation shows tools that ask the user before they act, written
// once for both protocol eras: a 2026-07-28 client gets an input_required
// result and retries with the answer; a legacy client gets an
// elicitation/create request on the call's stream.
//
//	go run ./examples/elicitation   # serves http://127.0.0.1:8080/mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

// files is the toy file system the delete tool works on.
type files struct {
	mu    sync.Mutex
	names map[string]bool
}

type DeleteArgs struct {
	Path string `json:"path" jsonschema:"description=The file to delete"`
}

type confirm struct {
	OK bool `json:"ok" jsonschema:"title=Delete it?,description=Check to delete the file for good."`
}

var confirmForm = core.MustForm[confirm]()

// deleteFile asks for confirmation, then deletes.
func (f *files) deleteFile(ctx context.Context, req *core.CallToolRequest, in DeleteArgs) (string, error) {
	f.mu.Lock()
	exists := f.names[in.Path]
	f.mu.Unlock()
	if !exists {
		return "", core.ToolErrorf("no such file: %s", in.Path)
	}
	c, action, err := confirmForm.Answer(req.Input, "confirm")
	switch {
	case err != nil:
		return "", err // the client's answer does not fit the form
	case action == "":
		// No answer yet (the first round): ask.
		return "", core.InputRequired(core.InputRequests{
			"confirm": confirmForm.Request(fmt.Sprintf("Delete %s? This cannot be undone.", in.Path)),
		}, "")
	case action != core.ActionAccept:
		// Declined or cancelled: the call ends; asking again would show
		// the user the same question.
		return "Kept " + in.Path + ": the user said no.", nil
	case !c.OK:
		return "Kept " + in.Path + ".", nil
	}
	f.mu.Lock()
	delete(f.names, in.Path)
	f.mu.Unlock()
	return "Deleted " + in.Path + ".", nil
}

// Booking is the form the book_table tool shows.
type Booking struct {
	Name   string `json:"name" jsonschema:"title=Name,description=Who is the table for?"`
	Guests int    `json:"guests" jsonschema:"title=Guests,minimum=1,maximum=12,default=2"`
	Time   string `json:"time" jsonschema:"title=Time,enum=18:00,enum=19:00,enum=20:00,enum=21:00,enumTitles=6 pm,enumTitles=7 pm,enumTitles=8 pm,enumTitles=9 pm"`
	Window bool   `json:"window,omitempty" jsonschema:"title=Window seat"`
}

var bookingForm = core.MustForm[Booking]()

type BookArgs struct {
	Restaurant string `json:"restaurant" jsonschema:"description=Where to book"`
}

// BookingResult is what book_table returns (as structured content). It is
// returned as a value, not a pointer: its schema then has an object root,
// which legacy clients (2025-06-18, 2025-11-25) get structured output for.
type BookingResult struct {
	Restaurant string  `json:"restaurant"`
	Booking    Booking `json:"booking"`
}

func bookTable(ctx context.Context, req *core.CallToolRequest, in BookArgs) (BookingResult, error) {
	b, action, err := bookingForm.Answer(req.Input, "booking")
	switch {
	case err != nil:
		return BookingResult{}, err
	case action == "":
		return BookingResult{}, core.InputRequired(core.InputRequests{"booking": bookingForm.Request("Book a table at " + in.Restaurant)}, "")
	case action != core.ActionAccept: // declined or cancelled: the call ends
		return BookingResult{}, core.ToolErrorf("the user did not book a table")
	}
	if b.Guests == 0 {
		b.Guests = 2 // the form's default, when the client left it out
	}
	return BookingResult{Restaurant: in.Restaurant, Booking: b}, nil
}

func newServer() *core.Server {
	srv := core.NewServer(core.Implementation{Name: "elicitation-example", Version: "1.0.0"}, nil)
	f := &files{names: map[string]bool{"notes.txt": true, "draft.md": true}}
	core.AddTool(srv, &core.Tool{Name: "delete_file", Description: "Delete a file after the user confirms.",
		Annotations: &core.ToolAnnotations{DestructiveHint: ptr(true)}}, f.deleteFile)
	core.AddTool(srv, &core.Tool{Name: "book_table", Description: "Book a restaurant table; asks the user for the details."}, bookTable)
	return srv
}

func ptr[T any](v T) *T { return &v }

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Printf("elicitation: serving MCP on http://%s/mcp", *addr)
	if err := nethttp.Serve(ctx, *addr, newServer(), nil); err != nil {
		log.Fatal(err)
	}
}
