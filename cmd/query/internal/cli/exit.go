// Exit codes and the one-line report of a failure on stderr.

package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes of the query command.
const (
	// ExitOK: the command did what it was asked.
	ExitOK = 0
	// ExitFailure: the command ran and failed; stderr says why.
	ExitFailure = 1
	// ExitUsage: the command line itself is wrong (unknown command or
	// flag, missing required flag, wrong number of arguments, a flag value
	// that does not parse).
	ExitUsage = 2
)

// usageError is a malformed command line found while running a command.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// runError marks an error returned by a command's own code, as opposed to
// one cobra raised while parsing the command line (which is a usage error).
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// runE adapts a command body so that its errors are told apart from cobra's
// parse errors.
func runE(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := fn(cmd, args); err != nil {
			return &runError{err: err}
		}
		return nil
	}
}

// report prints err as one line on w and returns the exit code for it.
func report(w io.Writer, cmd *cobra.Command, err error) int {
	var ue *usageError
	var re *runError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(w, "query: usage: %s%s\n", ue.msg, helpHint(cmd))
		return ExitUsage
	case errors.As(err, &re):
		fmt.Fprintf(w, "query: %s: %s\n", recordstore.Code(re.err), recordstore.Message(re.err))
		return ExitFailure
	default:
		fmt.Fprintf(w, "query: usage: %s%s\n", flagMessage(err), helpHint(cmd))
		return ExitUsage
	}
}

// flagMessage is the message of a command-line error; for a number flag
// whose value is out of its type's range it names the range, which
// strconv's "value out of range" does not.
func flagMessage(err error) string {
	var ive *pflag.InvalidValueError
	var ne *strconv.NumError
	if !errors.As(err, &ive) || !errors.As(err, &ne) || !errors.Is(ne.Err, strconv.ErrRange) {
		return recordstore.Message(err)
	}
	bound := "too large; want at most " + strconv.FormatInt(math.MaxInt64, 10)
	if strings.HasPrefix(ive.GetValue(), "-") {
		bound = "too small; want at least " + strconv.FormatInt(math.MinInt64, 10)
	}
	if t := ive.GetFlag().Value.Type(); strings.HasPrefix(t, "uint") || strings.HasPrefix(t, "float") {
		bound = "out of range for a " + t
	}
	return fmt.Sprintf("invalid argument %q for \"--%s\" flag: %s", ive.GetValue(), ive.GetFlag().Name, bound)
}

func helpHint(cmd *cobra.Command) string {
	if cmd == nil {
		return ""
	}
	return fmt.Sprintf(" (see '%s --help')", cmd.CommandPath())
}
