{
  "targets": [
    {
      "target_name": "alignment_json",
      "sources": ["src/areas/reads/native/alignment-json.c"],
      "cflags": ["-Wall", "-Wextra", "-Wno-unused-parameter"]
    },
    {
      "target_name": "call_scan",
      "sources": ["src/areas/variants/native/call-scan.c"],
      "cflags": ["-Wall", "-Wextra", "-Wno-unused-parameter"]
    }
  ]
}
