

# === collect: a missing application, and Ctrl-C, end with one line and no traceback ===========

from tests.fake_rocprofv3.helpers import app, fake  # noqa: E402,F401 - the fixture


@pytest.mark.parametrize("program", ["nosuch_app_xyz", "./build/missing_app", "/nonexistent/app"])
def test_robust_collect_of_an_application_that_does_not_exist(fake, program):  # noqa: F811
    before = sorted(os.listdir(fake.root))
    r = run_cli("collect", "--kernel", "gemm", "--format", "json", "--", program, "--size", "1")
    assert r.exit_code == 2, r.stderr
    doc = r.json()
    assert doc["error"]["code"] == "usage" and program in doc["error"]["message"]
    assert "Traceback" not in r.stderr and sorted(os.listdir(fake.root)) == before
    assert fake.calls() == []  # rocprofv3 never started


def _collect_then_signal(root: Path, out: Path, pidfile: Path, sig: int) -> subprocess.CompletedProcess:
    """collect a Python application that sleeps; `sig` to hotspot once the application runs (the
    ATT phase with --kernel given)."""
    argv = [sys.executable, "-m", "hotspot", "collect", "--kernel", "gemm", "--no-analyze", "--output",
            str(out), "--format", "json", "--",
            *app("import os, time", f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))", "time.sleep(30)")]
    p = subprocess.Popen(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=SUBPROCESS_TIMEOUT_S)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return subprocess.CompletedProcess(argv, p.returncode, stdout, stderr)


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_robust_signal_during_the_att_phase_prints_no_traceback(fake, tmp_path, sig, code):  # noqa: F811
    r = _collect_then_signal(fake.root, fake.root / "run", tmp_path / "app.pid", sig)
    assert r.returncode == code, r.stderr
    # neither hotspot's nor the application's (a SIGINT passed on made Python print one)
    assert "Traceback" not in r.stderr and "KeyboardInterrupt" not in r.stderr, r.stderr
    assert orjson.loads(r.stdout)["error"]["code"] == "interrupted"
    rec = json.loads((fake.root / "run" / "run.json").read_text())
    assert rec["status"] == "interrupted"
