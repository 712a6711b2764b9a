# CMake generated Testfile for 
# Source directory: /work/main
# Build directory: /work/main/build/dev
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("ir")
subdirs("pass")
subdirs("verifier")
subdirs("fuzz")
subdirs("tools")
subdirs("tests")
subdirs("bench")
