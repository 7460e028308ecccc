"""C-family code generation: one printer of loop-IR nodes (printer.py, printer_expr.py) and the
dialects that override what differs (c.py: the host C target)."""
