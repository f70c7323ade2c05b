"""Helpers the DWT-family tests share."""


def flat(c):
    """Every array of an swt/swt2/swtn/mra result, in order (dict keys sorted)."""
    out = []
    for p in c:
        if isinstance(p, dict):
            out += [p[k] for k in sorted(p)]
        elif isinstance(p, (tuple, list)):
            out += flat(p)
        else:
            out.append(p)
    return out
