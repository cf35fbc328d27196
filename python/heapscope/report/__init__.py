"""What is left of report/ while the tracking, timeline and job reports move to
analysis/ (documents) and render/ (text, CSV, plots); the size, library and stacks
reports are already there (analysis.identify, analysis.stack_types, analysis.by_library;
render.report_text, render.stacks_text, render.library_text, render.csv_tables).

FORMATS, to_json and add_format_options are kept until the tracking/timeline reports
move: commands/options.py (add_output_options, to_json, emit) replaces them.
"""
from heapscope.commands.options import to_json  # noqa: F401

FORMATS = ("text", "json", "csv")


def add_format_options(parser) -> None:
    """Kept until the tracking/timeline reports move: options.add_output_options."""
    from heapscope.commands.options import add_output_options
    add_output_options(parser, FORMATS)
