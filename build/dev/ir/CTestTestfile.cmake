# CMake generated Testfile for 
# Source directory: /work/main/ir
# Build directory: /work/main/build/dev/ir
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
