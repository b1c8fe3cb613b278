#!/usr/bin/env python3
"""Feeds a step binary the bad-input corpus (corpus.py) and checks how it answers.

    run_corpus.py STEP_BINARY WORK_DIR

Every refused input (a Usage case) must: exit with code 2, not by a signal; print exactly one
line on stderr, "<binary>: error: ...", that matches the case's pattern (it names the option
or file and the problem) and is at most MAX_MESSAGE characters long after that prefix, the
work directory's path counted as one character (no input is echoed whole); print nothing on stdout; use under MAX_CPU_S of CPU and finish
within MAX_WALL_S (on a second try if the first was only slow); and stay within EXTRA_RSS_MB
of the binary's baseline memory, under an address-space limit of the baseline plus
AS_HEADROOM_MB (an attempt to allocate gigabytes fails there). The baseline is the binary
blocked while reading its first input, from its standard input (--load-a /dev/stdin, a pipe
this script holds open), and that run's peak: the libraries it links (cuBLAS among them)
take far more than the inputs should.

Valid inputs (Accepted cases) must not be refused: exit 0 on a machine with a GPU, or 3 with
the one-line "no CUDA GPU" message on one without; and they must leave the expected files.
Runs on machines with and without a GPU; needs no GPU. The binary may be any step: the
harness judges every input, so the corpus is the same for each (CTest runs it against a
CUDA-core step and a tensor-core step).
"""
import os
import re
import resource
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

MAX_CPU_S = 1.0        # CPU seconds to refuse a bad input
MAX_WALL_S = 1.0       # wall-clock seconds to refuse one (a case over it alone is run again once:
                       # a busy machine may stall a process that needs only 0.1 s of CPU)
HANG_S = 120.0         # any run longer than this is killed and counted as a hang
MAX_MESSAGE = 300      # characters of a refusal's message (the work directory's path counted
                       # as one): the longest reason fits; an input echoed whole (100 KB) does not
# Peak resident memory over the baseline. On a machine with a GPU driver the libraries that
# start-up pages in vary by about 17 MB from run to run (seen on an H100: baseline 201 MB,
# refusals 218 MB); a loader that allocated what a file claims would take gigabytes.
EXTRA_RSS_MB = 64
AS_HEADROOM_MB = 256   # address space over the baseline


class Result:
    def __init__(self, code, signal, stdout, stderr, cpu, wall, rss_kb, hung):
        self.code, self.signal, self.stdout, self.stderr = code, signal, stdout, stderr
        self.cpu, self.wall, self.rss_kb, self.hung = cpu, wall, rss_kb, hung


def run(binary, args, env=None, as_limit=None, on_start=None, stdin=None):
    """Runs the binary; returns its Result, with its own CPU time and peak memory (wait4).
    `stdin`: None for /dev/null, or bytes written into a pipe on its standard input (then
    closed), after on_start(process) has returned."""
    def limits():
        if as_limit:
            resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))  # no runaway file
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    full_env = dict(os.environ)
    full_env.pop("NVIDIA_TF32_OVERRIDE", None)
    full_env.update(env or {})
    start = time.monotonic()
    p = subprocess.Popen([binary] + args, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env, preexec_fn=limits)
    out, err = [], []
    readers = [threading.Thread(target=lambda s=s, d=d: d.append(s.read())) for s, d in ((p.stdout, out), (p.stderr, err))]
    for t in readers:
        t.start()
    if on_start:
        on_start(p)
    if stdin is not None:
        def feed():
            try:
                p.stdin.write(stdin)
            except OSError:  # the binary stopped reading: a refusal
                pass
            finally:
                try:
                    p.stdin.close()
                except OSError:
                    pass
        readers.append(threading.Thread(target=feed, daemon=True))
        readers[-1].start()
    hung = False
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > HANG_S:
            hung = True
            p.kill()
            pid, status, usage = os.wait4(p.pid, 0)
            break
        time.sleep(0.002)
    wall = time.monotonic() - start
    p.returncode = status  # reaped here; keep Popen from waiting again
    for t in readers:
        t.join()
    signal = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    decode = lambda b: b[0].decode("utf-8", "replace") if b else ""
    return Result(code, signal, decode(out), decode(err), usage.ru_utime + usage.ru_stime, wall,
                  usage.ru_maxrss, hung)


def reading_stdin(pid):
    """Has the process opened its standard input again (/dev/stdin) and gone to sleep on it?"""
    try:
        stdin = os.readlink("/proc/%d/fd/0" % pid)
        opened = any(os.readlink("/proc/%d/fd/%s" % (pid, fd)) == stdin
                     for fd in os.listdir("/proc/%d/fd" % pid) if int(fd) > 2)
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rpartition(")")[2].split()[0]
    except (OSError, ValueError, IndexError):
        return False
    return opened and state == "S"


def baseline(binary, work):
    """The binary's memory while it waits for its first input: (VmSize bytes, VmRSS kB), and
    the result of that run (an empty standard input is an empty file: exit 2)."""
    seen = {}

    def measure(p):
        deadline = time.monotonic() + 30
        while not reading_stdin(p.pid):
            if time.monotonic() > deadline or p.poll() is not None:
                return
            time.sleep(0.002)
        with open("/proc/%d/status" % p.pid) as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmSize", "VmRSS"):
                    seen[key] = int(value.split()[0])
        # run() closes the pipe next: the binary reads end-of-file, an empty input.

    r = run(binary, ["--check", "--load-a", "/dev/stdin", "--load-b", "/dev/stdin"], on_start=measure, stdin=b"")
    if "VmSize" not in seen:
        sys.exit("run_corpus: the binary never read its --load-a /dev/stdin (inputs read after the GPU starts?): %s"
                 % r.stderr.strip())
    return seen["VmSize"] * 1024, seen["VmRSS"], r


def message_length(r, binary, work):
    """Characters of the one-line message after "<binary>: error: ", the work directory as one."""
    return len(r.stderr.rstrip("\n").replace(work, "W")) - len(binary) - 9


def judge_usage(case, r, binary, work, rss_limit_kb):
    problems = []
    if r.hung:
        problems.append("hung (killed after %.0f s)" % HANG_S)
    if r.signal:
        problems.append("killed by signal %d" % r.signal)
    elif r.code != 2:
        problems.append("exit %s, wanted 2" % r.code)
    lines = r.stderr.splitlines()
    if len(lines) != 1:
        problems.append("%d lines on stderr, wanted 1" % len(lines))
    elif not lines[0].startswith(binary + ": error: "):
        problems.append("stderr does not start with '<binary>: error: '")
    elif not re.search(case.pattern, lines[0][len(binary) + 9:]):
        problems.append("message does not match /%s/" % case.pattern)
    elif message_length(r, binary, work) > MAX_MESSAGE:
        problems.append("message is %d characters long, over %d" % (message_length(r, binary, work), MAX_MESSAGE))
    if r.stdout:
        problems.append("wrote %d bytes to stdout" % len(r.stdout))
    if r.cpu > MAX_CPU_S:
        problems.append("took %.2f s of CPU (limit %.1f)" % (r.cpu, MAX_CPU_S))
    if r.wall > MAX_WALL_S:
        problems.append("took %.2f s (limit %.1f)" % (r.wall, MAX_WALL_S))
    if r.rss_kb > rss_limit_kb:
        problems.append("peak memory %d kB, over the limit of %d kB" % (r.rss_kb, rss_limit_kb))
    if case.after and not problems:
        extra = case.after(r)
        if extra:
            problems.append(extra)
    return problems


def judge_accepted(case, r, rss_limit_kb):
    problems = []
    if r.hung:
        return ["hung (killed after %.0f s)" % HANG_S]
    if r.signal:
        return ["killed by signal %d" % r.signal]
    lines = r.stderr.splitlines()
    if case.name == "ok.help":
        return [] if r.code == 0 and "usage:" in r.stdout else ["--help: exit %s" % r.code]
    if r.code == 3:
        if len(lines) != 1 or "no CUDA GPU found" not in lines[0]:
            problems.append("exit 3 without the one-line 'no CUDA GPU found' message: %r" % r.stderr[:300])
        if r.cpu > MAX_CPU_S:
            problems.append("took %.2f s of CPU to find no GPU" % r.cpu)
        if r.rss_kb > rss_limit_kb:
            problems.append("peak memory %d kB, over the limit of %d kB" % (r.rss_kb, rss_limit_kb))
    elif r.code != 0:
        problems.append("exit %s, wanted 0 (GPU) or 3 (no GPU): %s" % (r.code, r.stderr.strip()[:300]))
    if case.after and not problems:
        extra = case.after(r, r.code == 0)
        if extra:
            problems.append(extra)
    return problems


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    os.chdir(work)  # stray outputs (a file named --check) would land here
    vm_bytes, blocked_rss_kb, first = baseline(binary, work)
    # That run is itself a refusal (an empty input): its peak, which includes what exiting
    # touches, is the cost of refusing anything.
    rss_kb = max(blocked_rss_kb, first.rss_kb)
    rss_limit_kb = rss_kb + EXTRA_RSS_MB * 1024
    as_limit = vm_bytes + (AS_HEADROOM_MB << 20)
    print("baseline: VmSize %.0f MB, VmRSS %.1f MB; limits: %.0f MB of address space, %.1f MB resident, "
          "%.1f s CPU, %.1f s wall" % (vm_bytes / 2**20, rss_kb / 1024, as_limit / 2**20, rss_limit_kb / 1024,
                                       MAX_CPU_S, MAX_WALL_S))
    cases = corpus.build(work)
    failures = []
    base_case = corpus.Usage("npy.empty_stdin", [], r"--load-a /dev/stdin: is empty")
    results = [(base_case, first, judge_usage(base_case, first, binary, work, rss_limit_kb))]
    for case in cases:
        if isinstance(case, corpus.Usage):
            r = run(binary, case.args, env=case.env, as_limit=as_limit, stdin=case.stdin)
            problems = judge_usage(case, r, binary, work, rss_limit_kb)
            if problems and all(p.startswith("took") and "CPU" not in p for p in problems):
                r = run(binary, case.args, env=case.env, as_limit=as_limit, stdin=case.stdin)
                problems = judge_usage(case, r, binary, work, rss_limit_kb)
        else:
            r = run(binary, case.args, stdin=case.stdin)
            problems = judge_accepted(case, r, rss_limit_kb)
        results.append((case, r, problems))
    worst_cpu = max(r.cpu for c, r, p in results if isinstance(c, corpus.Usage))
    worst_rss = max(r.rss_kb for c, r, p in results if isinstance(c, corpus.Usage))
    worst_wall = max(r.wall for c, r, p in results if isinstance(c, corpus.Usage))
    longest = max(message_length(r, binary, work) for c, r, p in results if isinstance(c, corpus.Usage))
    for case, r, problems in results:
        status = "FAIL" if problems else "ok  "
        line = r.stderr.splitlines()[0] if r.stderr.splitlines() else ""
        print("%s %-40s exit %-4s %.2fs cpu %6.1f MB  %s" % (status, case.name, r.code if not r.signal else "sig%d" % r.signal,
                                                             r.cpu, r.rss_kb / 1024, line.replace(binary, "<bin>")[:150]))
        for p in problems:
            print("       -> " + p)
            failures.append(case.name)
    usage = sum(isinstance(c, corpus.Usage) for c, _, _ in results)
    gpu = any(r.code == 0 for c, r, _ in results if isinstance(c, corpus.Accepted) and c.name != "ok.help")
    print("run_corpus: %d refused inputs, %d valid ones (%s); worst refusal: %.2f s CPU, %.2f s wall, %.1f MB "
          "peak (%.1f MB over the baseline), longest message %d characters; %d failed"
          % (usage, len(results) - usage, "GPU present" if gpu else "no GPU", worst_cpu, worst_wall, worst_rss / 1024,
             (worst_rss - rss_kb) / 1024, longest, len(set(failures))))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
