// fleetappend appends NDJSON rows from stdin to one stream of a fleet
// store through the fleet API, as a service using recordstore/fleet would:
//
//	fleetappend ROOT KEY STREAM KIND < rows.ndjson
//
// It prints the append's result as JSON; a failure goes to stderr with
// exit 1. The specs of query serve --fleet run it as another process.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fleetappend:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("usage: fleetappend ROOT KEY STREAM KIND < rows.ndjson")
	}
	var rows []recordstore.Row
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var r recordstore.Row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("row %q: %w", sc.Text(), err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	f, err := fleet.Open(args[0], fleet.Options{Mode: fleet.ModeTenant, SweepInterval: -1})
	if err != nil {
		return err
	}
	defer f.Close()
	k, err := f.ParseKey(args[1])
	if err != nil {
		return err
	}
	return f.Do(ctx, k, func(ctx context.Context, st *fleet.Store) error {
		out, err := st.Append(ctx, args[2], args[3], rows, owner.AppendOptions{})
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(out)
	})
}
