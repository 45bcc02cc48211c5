#!/bin/sh
# Compiles the test models of this folder from their JSON (Debian's flatc:
# apt-get install flatbuffers-compiler). Run from this folder.
set -e
flatc -b -o . ../../../formats/tflite/tflitefb/schema.fbs signal_window.json
