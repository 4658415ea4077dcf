// Command s3serve runs the test S3-compatible server (package s3test) on
// a fixed loopback address until interrupted, for trying replication,
// restore and lake exports by hand without a real object store:
//
//	go run ./recordstoretest/s3test/s3serve -addr 127.0.0.1:9000 -bucket demo
//
// It prints the environment a client needs (credentials and region) and
// an example replica address. Everything it stores is in memory and gone
// when it stops.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fb46ecde/records/recordstoretest/s3test"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "loopback address to listen on")
	bucket := flag.String("bucket", "demo", "the bucket to create")
	flag.Parse()
	srv, err := s3test.StartAt(*addr, *bucket)
	if err != nil {
		fmt.Fprintln(os.Stderr, "s3serve:", err)
		os.Exit(1)
	}
	for _, kv := range srv.Env() {
		fmt.Printf("export %s\n", kv)
	}
	fmt.Printf("# replica address: %s\n", srv.URL("app"))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	_ = srv.Close()
}
