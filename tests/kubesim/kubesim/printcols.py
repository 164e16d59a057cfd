"""Placeholder for additionalPrinterColumns rendering (branch i18-schema writes the real one).

Simple `.a.b` JSON paths only, ages for `date` columns. Replaced at merge by
i18-schema's module with these signatures.
"""

DEFAULT_COLUMNS = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]


def column_definitions(printer_columns):
    """Table columnDefinitions: Name, then one per printer column."""
    from .tables import NAME
    printer_columns = printer_columns or DEFAULT_COLUMNS
    return [NAME] + [{"name": c["name"], "type": c.get("type", "string"), "format": c.get("format", ""),
                      "description": c.get("description", ""), "priority": c.get("priority", 0)}
                     for c in printer_columns]


def row_cells(printer_columns, obj, now):
    """One row's cells, in column_definitions' order."""
    from .tables import _since
    printer_columns = printer_columns or DEFAULT_COLUMNS
    cells = [obj["metadata"]["name"]]
    for c in printer_columns:
        v = obj
        for p in c.get("jsonPath", "").strip(".").split("."):
            v = v.get(p) if isinstance(v, dict) else None
        if c.get("type") == "date" and v is not None:
            v = _since(now, v)
        cells.append(v)
    return cells
