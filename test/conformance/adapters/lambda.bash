# lambda.bash: sourced by the lambda-*.sh adapters. serve_lambda runs the
# conformance fixture as an AWS Lambda function behind test/lambdafront,
# with its state shared between the function's copies as between Lambda
# instances: sessions in DynamoDB (dynalite), requestState keys from one
# static key.
#
#   serve_lambda WORKDIR STREAMING LAMBDAFRONT_FLAG...
#
# It builds the fixture as a linux bootstrap (-tags lambda.norpc; no
# -trimpath or CGO_ENABLED=0, so that run.sh's build cache serves), starts
# dynalite (or uses the one MCPFN_DYNAMODB_ENDPOINT names), creates a fresh
# session table, starts lambdafront with a pool of
# ${MCPFN_LAMBDA_CONCURRENCY:-8} copies of the function (the suite sends
# concurrent requests, and a legacy call waiting for the client's answer
# holds one copy while the answer arrives on another), prints
# "serving MCP on URL" and runs until killed; then it stops lambdafront
# (and with it every copy of the function) and the dynalite it started.
# STREAMING=1 builds the function for response streaming (MCPFN_STREAMING=1).

serve_lambda() {
  local work=$1 streaming=$2
  shift 2
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
  children=() dynalite_state=""
  trap _lambda_cleanup EXIT
  trap 'exit 0' TERM INT

  case " $* " in
    *" -runtime rie "*) set -- "$@" -rie "$("$root/test/lambdafront/install-rie.sh")" ;;
  esac

  # Build the bootstrap and the tools, in parallel.
  (cd "$root" && exec env GOOS=linux go build -tags lambda.norpc -o "$work/bootstrap" ./examples/everything) &
  children+=($!)
  (cd "$root" && exec go build -o "$work/" ./test/lambdafront ./test/dynalite/mktable) &
  children+=($!)
  wait "${children[0]}" && wait "${children[1]}"
  children=()

  if [ -z "${MCPFN_DYNAMODB_ENDPOINT:-}" ]; then
    dynalite_state=$(mktemp -d "${TMPDIR:-/tmp}/mcpfn-dynalite.XXXXXX")
    local env
    env=$(MCPFN_DYNALITE_STATE=$dynalite_state "$root/test/dynalite/start.sh" --detach)
    eval "$env"
  fi
  local table
  table=conformance-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
  "$work/mktable" -endpoint "$MCPFN_DYNAMODB_ENDPOINT" "$table" >&2

  # The function's environment, as the deployment would set it (with dummy
  # credentials, which dynalite accepts).
  unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL MCPFN_KEYS_SECRET_ID
  export MCPFN_DYNAMODB_TABLE=$table AWS_ENDPOINT_URL_DYNAMODB=$MCPFN_DYNAMODB_ENDPOINT
  export AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local
  MCPFN_STATE_KEY=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
  export MCPFN_STATE_KEY
  if [ "$streaming" = 1 ]; then export MCPFN_STREAMING=1; else unset MCPFN_STREAMING; fi
  # Tasks run in the copy that created them (the in-process runner), not in
  # an asynchronous invocation (the kit's default on Lambda): lambdafront
  # serves no Invoke API, and its copies keep running after a response.
  export MCPFN_TASK_RUNNER=inprocess

  # The log is read for the URL below; a log left in $work by an earlier
  # run would give its URL before tee has truncated the file.
  rm -f "$work/lambdafront.log"
  "$work/lambdafront" -addr 127.0.0.1:0 -bootstrap "$work/bootstrap" \
    -concurrency "${MCPFN_LAMBDA_CONCURRENCY:-8}" "$@" 2> >(tee "$work/lambdafront.log" >&2) &
  local front=$!
  children+=("$front")
  local url=""
  for _ in $(seq 1 300); do
    url=$(sed -n 's/.*msg=serving url=\(http[^ ]*\).*/\1/p' "$work/lambdafront.log" 2>/dev/null | head -n1 || true)
    [ -n "$url" ] && break
    kill -0 "$front" 2>/dev/null || { echo "lambdafront exited" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$url" ] || { echo "lambdafront did not start" >&2; exit 1; }
  echo "serving MCP on $url/mcp"
  wait "$front"
}

# _lambda_cleanup stops what serve_lambda started: the builds or lambdafront
# (which stops every copy of the function), and dynalite.
_lambda_cleanup() {
  local p
  for p in "${children[@]+"${children[@]}"}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${children[@]+"${children[@]}"}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "${dynalite_state:-}" ]; then
    MCPFN_DYNALITE_STATE=$dynalite_state "$root/test/dynalite/stop.sh" || true
    rm -rf "$dynalite_state"
  fi
}
