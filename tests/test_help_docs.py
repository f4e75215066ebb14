"""The help texts and the docs agree (issue 82): ctest `help_docs`.

- every command `rnnsearch --help` lists, and every option of every `rnnsearch COMMAND --help`,
  is named in the docs (README.md and docs/*.md), and docs/design.md §4 (Command line) has a
  row for each command and names each of its options;
- every `--option` the docs name exists in some command's help, unless it belongs to one of
  the project's own scripts or tools named beside it (its source must hold it), or to another
  program the docs name beside it (EXCEPTIONS, each with the program's name);
- every docs/*.md a help text points to exists, and every variable of scripts/quickstart.sh
  is named in docs/training.md.

docs/history/ and CHANGELOG.md are history and may name options as they were. Run by ctest
with RNNSEARCH_BINARY set; by hand: `python3 tests/test_help_docs.py` after building
build/rnnsearch.
"""
import glob
import os
import re
import subprocess
import unittest

from rnnsearch_binary import BINARY, SOURCE_DIR

# Options of other programs that the docs name. Each applies only where the line holding the
# option, or one of the two before it, names that program (the second field).
EXCEPTIONS = {
    "add-architecture": "dpkg",  # building.md: the arm64 packages of a cross build
    "allow-run-as-root": "Open MPI",  # training.md: mpirun as root
    "hostfile": "mpirun",  # training.md: ranks on several hosts
    "build": "cmake",  # cmake --build, --install, --component, --target
    "install": "cmake",
    "component": "cmake",
    "target": "cmake",
    "no-build-isolation": "pip",  # python.md, building.md: pip install of the module
    "no-index": "pip",
    "system-site-packages": "venv",  # python3 -m venv
    "user-site": "python3 -m site",  # where cmake --install puts the module
    "shm-size": "container",  # docker's option for /dev/shm (scaling.md)
    "chrf-lowercase": "sacreBLEU",  # metrics.md: sacreBLEU options rnnsearch bleu lacks
    "num-refs": "sacreBLEU",
    "lr-decay-strategy": "Marian",  # design.md, translating.md, scaling.md: Marian's names
    "lr-decay-start": "Marian",
    "output-sampling": "Marian",
    "sentencepiece-max-lines": "Marian",
    "temperature": "fairseq",  # translating.md: fairseq's sampling option
    "vocabulary": "subword-nmt",  # design.md: subword-nmt's vocabulary filter
    "enc_recurrence_transition_depth": "Nematus",  # design.md: Nematus' deep transition
}

# The project's own programs that docs show with their options, and their sources.
TOOLS = {"serve_bench": "src/tools/serve_bench.cpp", "gemm_bench": "src/tools/gemm_bench.cpp"}

OPTION_IN_HELP = re.compile(r"^  (?:-\w \[ )?--([A-Za-z0-9][\w-]*)", re.M)  # Boost's "  -m [ --model ] arg"
OPTION_IN_DOCS = re.compile(r"(?<![\w-])--([a-z0-9][a-z0-9_-]*)(\*?)")


def run(*args):
    done = subprocess.run(BINARY + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8", "replace")


def read(path):
    with open(os.path.join(SOURCE_DIR, path), encoding="utf-8") as f:
        return f.read()


def named(option, text):
    return re.search(r"(?<![\w-])--" + re.escape(option) + r"(?![\w-])", text) is not None


class HelpAndDocs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        status, cls.usage, _ = run("--help")
        assert status == 0, "rnnsearch --help failed"
        commands_part = cls.usage[cls.usage.index("Commands:"):]
        cls.commands = re.findall(r"^  ([a-z][a-z-]*) ", commands_part, re.M)
        assert len(cls.commands) >= 10, cls.usage
        cls.helps, cls.unavailable = {}, {}
        for command in cls.commands:
            status, out, err = run(command, "--help")
            if status == 0:
                cls.helps[command] = out
            else:  # serve in a build without cpp-httplib says why
                cls.unavailable[command] = err.strip()
        cls.options = {c: OPTION_IN_HELP.findall(text) for c, text in cls.helps.items()}
        cls.all_options = set(re.findall(r"--([a-z][\w-]*)", cls.usage))  # --help, --version
        for found in cls.options.values():
            cls.all_options.update(found)
        cls.doc_paths = ["README.md"] + sorted(
            os.path.relpath(p, SOURCE_DIR) for p in glob.glob(os.path.join(SOURCE_DIR, "docs", "*.md")))
        cls.docs = {path: read(path) for path in cls.doc_paths}
        cls.all_docs = "\n".join(cls.docs.values())
        design = cls.docs["docs/design.md"]
        cls.design_cli = design[design.index("## 4. Command line"):design.index("\n## 5.")]

    def test_every_command_and_option_of_the_help_is_in_the_docs(self):
        missing = [c for c in self.commands if not re.search(r"rnnsearch " + re.escape(c) + r"(?![\w-])", self.all_docs)]
        self.assertEqual(missing, [], "commands of rnnsearch --help that no doc names as `rnnsearch COMMAND`")
        missing = sorted({"%s --%s" % (c, o) for c, found in self.options.items() for o in found
                          if not named(o, self.all_docs)})
        self.assertEqual(missing, [], "options of a command's --help that README.md and docs/*.md never name")

    def test_design_command_line_section_has_every_command_and_option(self):
        rows = [c for c in self.commands if not re.search(r"^\| `" + re.escape(c) + r"` \|", self.design_cli, re.M)]
        self.assertEqual(rows, [], "commands without a row in docs/design.md §4's table")
        missing = sorted({"%s --%s" % (c, o) for c, found in self.options.items() for o in found
                          if not named(o, self.design_cli)})
        self.assertEqual(missing, [], "options that docs/design.md §4 (Command line) does not name")

    def test_every_option_the_docs_name_exists(self):
        if self.unavailable:
            self.skipTest("this build lacks %s, so its options cannot be listed: %s"
                          % (", ".join(self.unavailable), "; ".join(self.unavailable.values())))
        unknown, used = [], set()
        for path, text in self.docs.items():
            lines = text.split("\n")
            for number, line in enumerate(lines):
                for match in OPTION_IN_DOCS.finditer(line):
                    option, wildcard = match.group(1), match.group(2)
                    if wildcard or option.endswith("-"):  # `--vocab-*`, `--subword*`: a family of options
                        prefix = option
                        if any(o.startswith(prefix) for o in self.all_options):
                            continue
                    option = option.rstrip("-")
                    if option in self.all_options:
                        continue
                    around = "\n".join(lines[max(0, number - 2):number + 1])
                    if self.of_a_project_tool(option, around):
                        continue
                    program = EXCEPTIONS.get(option)
                    if program is not None and program in around:
                        used.add(option)
                        continue
                    unknown.append("%s:%d: --%s" % (path, number + 1, option))
        self.assertEqual(unknown, [], "options the docs name that no command's --help lists "
                                      "(nor a script named beside them, nor EXCEPTIONS)")
        self.assertEqual(sorted(set(EXCEPTIONS) - used), [], "EXCEPTIONS no doc needs any more: drop them")

    @staticmethod
    def of_a_project_tool(option, around):
        """True when a script (scripts/NAME) or tool (serve_bench, ...) named in `around` takes --option."""
        sources = ["scripts/" + name for name in re.findall(r"scripts/([\w.-]+\w)", around)]
        sources += [path for tool, path in TOOLS.items() if re.search(r"\b" + tool + r"\b", around)]
        for source in sources:
            path = os.path.join(SOURCE_DIR, source)
            if os.path.isfile(path) and named(option, read(source)):
                return True
        return False

    def test_every_quickstart_variable_is_in_training_md(self):
        variables = sorted(set(re.findall(r"^([A-Z_]+)=\$\{\1:-", read("scripts/quickstart.sh"), re.M)))
        self.assertIn("GUIDED", variables)
        missing = [v for v in variables if not re.search(r"\b" + v + r"\b", self.docs["docs/training.md"])]
        self.assertEqual(missing, [], "variables of scripts/quickstart.sh that docs/training.md does not name")

    def test_the_docs_a_help_points_to_exist(self):
        texts = [self.usage] + list(self.helps.values())
        # a help line is wrapped at any space, so join the lines first
        pointed = set(re.findall(r"docs/[\w/]+\.md", re.sub(r"\s+", " ", "\n".join(texts))))
        self.assertTrue(pointed)
        missing = sorted(p for p in pointed if not os.path.isfile(os.path.join(SOURCE_DIR, p)))
        self.assertEqual(missing, [])

    def test_exceptions_are_not_rnnsearch_options(self):
        # An exception that became an rnnsearch option would hide a wrong doc: drop it then.
        self.assertEqual(sorted(set(EXCEPTIONS) & self.all_options), [])


if __name__ == "__main__":
    unittest.main()
