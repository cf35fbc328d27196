"""Reports built from profiles: documents as plain data, then text, JSON or CSV.

  identify        the `heapscope report` document (size x region table, groups, hot sizes, API)
  stacktypes      the `heapscope stacks` document (symbolized stack trace types)
  render_report   text of the report document;  render_stacks   text of the stacks document
  csvout          CSV of both;  processes   the process header;  text   table helpers
  output          stdout or an atomically written file
JSON layouts: docs/report-formats.md.
"""
import json

FORMATS = ("text", "json", "csv")


def to_json(doc: dict) -> str:
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


def add_format_options(parser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="output format (default text; json is documented in docs/report-formats.md)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write to FILE (atomically) instead of standard output")
