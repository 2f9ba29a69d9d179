"""Build hooks: the optional native wave scanner, and the skill folder shipped inside the package.

- hotspot/att/engine/_wavescan.c is built with `optional=True`: without a C compiler the install still
  succeeds and hotspot parses wave files in Python (same results, slower); `hotspot doctor` reports
  which one is in use.
- The coding-assistant skill has one source, skills/hotspot/ (its references/plan-rules.md and
  stall-taxonomy.md are copies of docs/, kept equal by scripts/sync_skill.py and a test). A wheel gets
  it as hotspot/skill/hotspot/ at build time; an editable install reads skills/hotspot/ directly.
"""

import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SKILL_SOURCE = ROOT / "skills" / "hotspot"


class BuildWithSkill(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "hotspot" / "skill" / "hotspot"
        if SKILL_SOURCE.is_dir():
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(SKILL_SOURCE, target)


setup(
    ext_modules=[Extension("hotspot.att.engine._wavescan", ["hotspot/att/engine/_wavescan.c"],
                           optional=True)],
    cmdclass={"build_py": BuildWithSkill},
)
