// Command measure prints the numbers of the Lambda deployment: the size of
// the deployment packages of examples/lambda (both architectures), the cold
// start of its bootstrap under the Lambda Runtime Interface Emulator, and
// the per-invocation cost of adapters/lambda against net/http
// (BenchmarkToolsCall of package adapterbench), with ratios.
//
//	go run ./test/adapterbench/cmd/measure [-runs 10] [-count 3] [-benchtime 1s]
//
// Cold start is the time from the exec of the emulator, which execs the
// bootstrap at once, to the answer of the first invocation (a Function URL
// event carrying a 2026-07-28 tools/call, with response streaming), median
// of -runs fresh emulators; the time of a second, warm invocation follows.
// It needs aws-lambda-rie (test/lambdafront/install-rie.sh), found in
// $MCPFN_RIE, ${MCPFN_TOOLS:-~/.cache/mcpfn/bin} or $PATH; without it that
// part is skipped. Run it on an idle machine: the numbers are wall-clock.
package main

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/test/adapterbench"
	"github.com/mcpfn/mcpfn/test/internal/proc"
	"github.com/mcpfn/mcpfn/test/internal/repo"
	"github.com/mcpfn/mcpfn/test/internal/rie"
)

func main() {
	testing.Init()
	runs := flag.Int("runs", 10, "cold starts to take the median of")
	count := flag.Int("count", 3, "runs of each benchmark case (the median is reported)")
	benchtime := flag.Duration("benchtime", time.Second, "duration of each benchmark run")
	flag.Parse()
	flag.Set("test.benchtime", benchtime.String())

	root, err := repo.FindRoot()
	check(err)
	dir, err := os.MkdirTemp("", "measure")
	check(err)
	defer os.RemoveAll(dir)

	fmt.Printf("# %s/%s, %d CPUs, %s\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())

	fmt.Println("## Deployment packages (examples/lambda/build.sh)")
	build := exec.Command(filepath.Join(root, "examples/lambda/build.sh"), "arm64", "amd64")
	build.Env = append(os.Environ(), "OUT="+dir)
	build.Stderr = os.Stderr
	check(build.Run())
	for _, arch := range []string{"arm64", "amd64"} {
		zipPath := filepath.Join(dir, "lambda-"+arch+".zip")
		st, err := os.Stat(zipPath)
		check(err)
		zr, err := zip.OpenReader(zipPath)
		check(err)
		fmt.Printf("lambda-%s.zip  %9d bytes (%.2f MiB); bootstrap %d bytes (%.2f MiB)\n", arch,
			st.Size(), mib(st.Size()), zr.File[0].UncompressedSize64, mib(int64(zr.File[0].UncompressedSize64)))
		zr.Close()
	}
	fmt.Println()

	fmt.Println("## Cold start under aws-lambda-rie (exec to first answered invocation)")
	if riePath, err := rie.Find(); err != nil {
		fmt.Println("skipped:", err)
	} else if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		fmt.Println("skipped: no bootstrap for", runtime.GOARCH)
	} else {
		bootstrap := filepath.Join(dir, "bootstrap")
		check(unzip(filepath.Join(dir, "lambda-"+runtime.GOARCH+".zip"), bootstrap))
		var cold, warm []time.Duration
		for range *runs {
			c, w, err := coldStart(riePath, bootstrap)
			check(err)
			cold, warm = append(cold, c), append(warm, w)
		}
		fmt.Printf("cold: median %v, min %v, max %v (%d runs)\n", median(cold),
			slices.Min(cold).Round(10*time.Microsecond), slices.Max(cold).Round(10*time.Microsecond), *runs)
		fmt.Printf("warm: median %v (second invocation of each run)\n", median(warm))
	}
	fmt.Println()

	fmt.Printf("## BenchmarkToolsCall (median of %d × %v; ratio to nethttp)\n", *count, *benchtime)
	fmt.Printf("%-22s %12s %10s %10s %8s\n", "case", "ns/op", "B/op", "allocs/op", "ratio")
	var base float64
	for _, c := range adapterbench.Cases {
		var rs []testing.BenchmarkResult
		for range *count {
			r := testing.Benchmark(func(b *testing.B) { adapterbench.Run(b, c) })
			if r.N == 0 {
				check(fmt.Errorf("benchmark %s failed", c.Name))
			}
			rs = append(rs, r)
		}
		slices.SortFunc(rs, func(a, b testing.BenchmarkResult) int { return int(a.NsPerOp() - b.NsPerOp()) })
		r := rs[len(rs)/2]
		ns := float64(r.T.Nanoseconds()) / float64(r.N)
		if base == 0 {
			base = ns
		}
		fmt.Printf("%-22s %12.0f %10d %10d %7.2fx\n", c.Name, ns, r.AllocedBytesPerOp(), r.AllocsPerOp(), ns/base)
	}
}

// coldStart starts a fresh emulator with bootstrap and invokes it twice. It
// returns the time from the exec to the first answer, and the time of the
// second invocation.
func coldStart(rie, bootstrap string) (cold, warm time.Duration, err error) {
	ports, err := freePorts(2)
	if err != nil {
		return 0, 0, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", addr,
		"--runtime-api-address", "127.0.0.1:"+strconv.Itoa(ports[1]), bootstrap)
	cmd.Dir = filepath.Dir(bootstrap)
	key := make([]byte, 32)
	rand.Read(key)
	cmd.Env = append(os.Environ(), "MCPFN_STREAMING=1", "MCPFN_LOG_LEVEL=warn", "MCPFN_DYNAMODB_TABLE=", "MCPFN_KEYS_SECRET_ID=",
		"MCPFN_STATE_KEY="+base64.StdEncoding.EncodeToString(key), "AWS_LAMBDA_FUNCTION_TIMEOUT=10")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		children := proc.Children(cmd.Process.Pid) // the emulator runs the function in a process group of its own
		cmd.Process.Kill()
		for _, pid := range children {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		cmd.Wait()
		if err != nil {
			err = fmt.Errorf("%w; emulator output:\n%s", err, out.String())
		}
	}()
	for {
		c, derr := net.Dial("tcp", addr)
		if derr == nil {
			c.Close()
			break
		}
		if time.Since(start) > 10*time.Second {
			return 0, 0, errors.New("the emulator did not listen")
		}
		time.Sleep(time.Millisecond)
	}
	event := adapterbench.FunctionURLEvent()
	url := "http://" + addr + "/2015-03-31/functions/function/invocations"
	if err := invoke(url, event); err != nil {
		return 0, 0, err
	}
	cold = time.Since(start)
	t := time.Now()
	if err := invoke(url, event); err != nil {
		return 0, 0, err
	}
	return cold, time.Since(t), nil
}

func invoke(url string, event []byte) error {
	res, err := http.Post(url, "application/json", bytes.NewReader(event))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if !adapterbench.Answered(b) {
		return fmt.Errorf("unexpected answer %s: %q", res.Status, b)
	}
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2].Round(10 * time.Microsecond)
	}
	return ((s[len(s)/2-1] + s[len(s)/2]) / 2).Round(10 * time.Microsecond)
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func unzip(zipPath, dst string) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return err
	}
	defer zr.Close()
	in, err := zr.File[0].Open()
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, in); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}
