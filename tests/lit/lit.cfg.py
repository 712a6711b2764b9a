# lit configuration of the cds-harness text-format suite.
import os

import lit.formats

config.name = "cds-harness"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".pyir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cds_obj_root, "tests", "lit")

# FileCheck and not from LLVM 14 first, then the build's tools.
path = os.pathsep.join([config.llvm_tools_dir, config.cds_tools_dir, config.environment.get("PATH", "")])
config.environment["PATH"] = path
