// query fleet verify: verify the replicas of a sample of a fleet's stores.

package cli

import (
	"context"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/spf13/cobra"
)

func (a *app) fleetVerifyCmd(p *fleetArgs) *cobra.Command {
	var (
		root, scratch string
		sample        int
	)
	cmd := &cobra.Command{
		Use:   "verify --replica-root URL [--sample N] [--scratch DIR]",
		Short: "Verify the replicas of a random sample of the fleet's stores",
		Long: `Pick --sample stores of the fleet at random (default 8) and run query
replica verify on each: its replica is the replica root --replica-root
joined with tenant/<id> or slot/<nnnnn>. Prints one line per store:
{"key","path","report":{"txid","streams","diffs","moving"},"code","error"}
(code and error only for a store that failed). When a store fails, verify
fails after printing every line, with that store's code (mismatch, gap,
checksum, check_failed, not_found) and exit 1.

A Go service runs the same on a schedule with Fleet.RunVerifier (default:
a round of 8 stores every hour).`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&root, "replica-root", "", "the fleet's replica root address (s3://BUCKET/PREFIX?... or file:///folder)")
	f.IntVar(&sample, "sample", fleet.DefaultVerifySample, "how many stores to verify")
	f.StringVar(&scratch, "scratch", "", "folder to make the scratch folders in (default: the system's temp folder)")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if root == "" {
			return usagef("--replica-root is required")
		}
		if sample <= 0 {
			return usagef("--sample must be positive")
		}
		return a.withFleet(p, args, false, func(ctx context.Context, fl *fleet.Fleet, _ fleet.Key) error {
			out, err := fl.VerifySample(ctx, sample, func(k fleet.Key) (string, error) {
				return fleet.ReplicaAddress(root, k)
			}, scratch)
			if err != nil {
				return err
			}
			p := newPrinter(a.env.Stdout)
			var failed []fleet.VerifyOutcome
			for _, o := range out {
				if o.Report.Diffs == nil {
					o.Report.Diffs = []replica.StreamDiff{}
				}
				if err := p.line(o); err != nil {
					return err
				}
				if o.Err != nil {
					failed = append(failed, o)
				}
			}
			if err := p.flush(); err != nil {
				return err
			}
			if len(failed) > 0 {
				first := failed[0]
				return &recordstore.Error{Code: first.Code, Err: first.Err,
					Msg: fmt.Sprintf("%d of %d replicas failed verification; first %s: %s", len(failed), len(out), first.Key, first.Message)}
			}
			return nil
		})(c, args)
	}
	return cmd
}
