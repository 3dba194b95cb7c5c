"""Templates ``mxnext new`` fills in (``string.Template`` syntax, ``.tmpl`` files)."""
