"""Runs what README.md shows, as it shows it, so that the README cannot drift from the code:
  - the "Three uses" commands (h5pack, h5pack-stats run, h5pack-stats simulate), with ~/data/train/
    replaced by a generated ImageFolder of the demo's default size (10 classes x 100 images);
  - the C example, compiled as written inside a main() that defines train_step, against the built
    libh5pack, on the train.h5 the first command wrote; docs/reader.md's first C example the same way
    (the two must agree on train_step);
  - the Python example, run as written with a train_step that counts batches.
Only two things are replaced, and said so: the image folder, and the examples' 90 epochs by 2.
Usage: /usr/bin/python3 readme_check.py BUILD_DIR SOURCE_DIR   (ctest: samples_readme)"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

EPOCHS_IN_README, EPOCHS_HERE = "90", "2"


def fail(msg):
    print("FAILED:", msg)
    sys.exit(1)


def section(text, heading):
    """The text from HEADING up to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = text.index(heading)
    rest = text[start + len(heading):]
    m = re.search(r"^#{1,%d} " % len(level), rest, re.M)
    return rest[: m.start()] if m else rest


def fenced(text, lang):
    m = re.search(r"```%s\n(.*?)```" % lang, text, re.S)
    if not m:
        fail(f"README.md has no ```{lang} block")
    return m.group(1)


def run(cmd, **kw):
    print("$", " ".join(shlex.quote(c) for c in cmd) if isinstance(cmd, list) else cmd, flush=True)
    p = subprocess.run(cmd, text=True, capture_output=True, **kw)
    print(p.stdout[-3000:], p.stderr[-3000:], sep="")
    if p.returncode != 0:
        fail(f"exit status {p.returncode}: {cmd}")
    return p.stdout


def three_uses(readme, images, env, work):
    """Each command line of the "Three uses" block, comments dropped, run in WORK."""
    block = section(readme, "## Three uses").split("\n\n")[1]
    lines = [ln.split("#")[0].strip() for ln in block.splitlines() if ln.strip()]
    if [ln.split()[0:2] for ln in lines] != [["h5pack", "--size"], ["h5pack-stats", "run"],
                                              ["h5pack-stats", "simulate"]]:
        fail(f"the three uses changed shape: {lines}")
    for ln in lines:
        run(shlex.split(ln.replace("~/data/train/", images + "/")), cwd=work, env=env)
    if not os.path.exists(os.path.join(work, "train.h5")):
        fail("the first use wrote no train.h5")


def c_example(readme, build, src, env, work, name="readme_example"):
    code = fenced(readme, "c").replace(f"cfg.epochs = {EPOCHS_IN_README};", f"cfg.epochs = {EPOCHS_HERE};")
    code = "\n".join(ln for ln in code.splitlines() if not ln.startswith("#include")) + "\n"
    program = ("#include <stdio.h>\n#include \"h5pack.h\"\nstatic long steps;\n"
               "static void train_step(const void *data, const int64_t *labels, size_t count, int on_device)\n"
               "{ (void)data; (void)labels; (void)count; (void)on_device; steps++; }\n"
               "int main(void)\n{\n" + code + "    printf(\"steps %ld\\n\", steps);\n    return steps > 0 ? 0 : 1;\n}\n")
    path = os.path.join(work, name + ".c")
    with open(path, "w") as f:
        f.write(program)
    lib = os.path.join(build, "reader")
    exe = os.path.join(work, name)
    run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(src, "include"), path, "-o", exe,
         "-L", lib, "-lh5pack", "-Wl,-rpath," + lib])
    out = run([exe], cwd=work, env=env)
    if not re.search(r"^steps [1-9]", out, re.M):
        fail(f"the C example trained no step: {out}")


def python_example(readme, src, env, work):
    code = fenced(readme, "python").replace(f"range({EPOCHS_IN_README})", f"range({EPOCHS_HERE})")
    program = "steps = 0\n\ndef train_step(images, labels):\n    global steps\n    steps += 1\n\n" + code + \
              "\nprint('steps', steps)\nassert steps > 0\n"
    path = os.path.join(work, "readme_example.py")
    with open(path, "w") as f:
        f.write(program)
    out = run(["/usr/bin/python3", path], cwd=work, env=dict(env, PYTHONPATH=os.path.join(src, "python")))
    if not re.search(r"^steps [1-9]", out, re.M):
        fail(f"the Python example trained no step: {out}")


def main():
    build, src = (os.path.abspath(a) for a in sys.argv[1:3])
    with open(os.path.join(src, "README.md")) as f:
        readme = f.read()
    for needle in (f"cfg.epochs = {EPOCHS_IN_README};", f"range({EPOCHS_IN_README})"):
        if needle not in readme:
            fail(f"README.md no longer has {needle!r}: update this test's replacement")
    lib = next((os.path.join(d, f) for d, _, fs in os.walk(os.path.join(build, "reader")) for f in fs
                if f == "libh5pack.so"), None)
    env = dict(os.environ, PATH=build + os.pathsep + os.environ["PATH"], H5PACK_LIBRARY=lib or "")
    with tempfile.TemporaryDirectory() as work:
        images = os.path.join(work, "images")
        run([os.path.join(build, "h5pack-gen-images"), images, "--classes", "10", "--per-class", "100", "--seed",
             "1"])
        three_uses(readme, images, env, work)
        c_example(readme, build, src, env, work)
        with open(os.path.join(src, "docs", "reader.md")) as f:
            c_example(f.read(), build, src, env, work, "reader_md_example")
        python_example(readme, src, env, work)
    print("README: the three uses, the C example and the Python example ran as written")


if __name__ == "__main__":
    main()
