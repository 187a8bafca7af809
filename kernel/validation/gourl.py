"""An approximation of Go's ``net/url.Parse``, enough to predict when it fails and with which message.

Covered: control characters, a leading ``:`` (missing protocol scheme), a colon in the first segment of a relative
path, invalid percent-escapes (path, fragment, userinfo, host), bad characters in the host, a missing ``]`` and a
non-numeric port. Not covered: the IP-literal checks newer Go releases make inside ``[...]``.
"""

from __future__ import annotations

from desched.validation.gofmt import go_quote

__all__ = ["parse_error", "scheme"]

_HEX = frozenset("0123456789abcdefABCDEF")
_HOST_EXTRA = frozenset("!$&'()*+,;=:[]<>\"-_.~")
_USERINFO_EXTRA = frozenset("-._:~!$&'()*+,;=%@")


class _URLError(Exception):
    """``args[0]`` is the inner error text of ``*url.Error``."""


def _is_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _unescape(text: str, host: bool) -> None:
    index = 0
    while index < len(text):
        char = text[index]
        if char == "%":
            if index + 2 >= len(text) or text[index + 1] not in _HEX or text[index + 2] not in _HEX:
                raise _URLError(f"invalid URL escape {go_quote(text[index : index + 3])}")
            if host and int(text[index + 1], 16) < 8 and text[index : index + 3] != "%25":
                raise _URLError(f"invalid URL escape {go_quote(text[index : index + 3])}")
            index += 3
            continue
        if host and ord(char) < 0x80 and not _is_alnum(char) and char not in _HOST_EXTRA:
            raise _URLError(f"invalid character {go_quote(char)} in host name")
        index += 1


def _valid_optional_port(port: str) -> bool:
    if port == "":
        return True
    if not port.startswith(":"):
        return False
    return all("0" <= char <= "9" for char in port[1:])


def _parse_host(host: str) -> None:
    if host.startswith("["):
        close = host.rfind("]")
        if close < 0:
            raise _URLError("missing ']' in host")
        colon_port = host[close + 1 :]
        if not _valid_optional_port(colon_port):
            raise _URLError(f"invalid port {go_quote(colon_port)} after host")
    else:
        colon = host.rfind(":")
        if colon != -1:
            colon_port = host[colon:]
            if not _valid_optional_port(colon_port):
                raise _URLError(f"invalid port {go_quote(colon_port)} after host")
    _unescape(host, host=True)


def _parse_authority(authority: str) -> None:
    at = authority.rfind("@")
    _parse_host(authority if at < 0 else authority[at + 1 :])
    if at < 0:
        return
    userinfo = authority[:at]
    if not all(_is_alnum(char) or char in _USERINFO_EXTRA for char in userinfo):
        raise _URLError("net/url: invalid userinfo")
    for part in userinfo.split(":", 1):
        _unescape(part, host=False)


def _get_scheme(raw: str) -> tuple[str, str]:
    for index, char in enumerate(raw):
        if ("a" <= char <= "z") or ("A" <= char <= "Z"):
            continue
        if ("0" <= char <= "9") or char in "+-.":
            if index == 0:
                return "", raw
            continue
        if char == ":":
            if index == 0:
                raise _URLError("missing protocol scheme")
            return raw[:index], raw[index + 1 :]
        return "", raw
    return "", raw


def _parse(raw: str) -> str:
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in raw):
        raise _URLError("net/url: invalid control character in URL")
    if raw == "*":
        return ""
    url_scheme, rest = _get_scheme(raw)
    # a lone trailing "?" (ForceQuery) or the query are cut off; neither is checked
    rest = rest[:-1] if rest.endswith("?") and rest.count("?") == 1 else rest.split("?", 1)[0]
    if not rest.startswith("/"):
        if url_scheme:
            return url_scheme.lower()  # opaque: nothing more is parsed
        if ":" in rest.split("/", 1)[0]:
            raise _URLError("first path segment in URL cannot contain colon")
    if (url_scheme or not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        _parse_authority(authority)
        rest = slash + path
    _unescape(rest, host=False)
    return url_scheme.lower()


def _split_fragment(raw: str) -> tuple[str, str | None]:
    head, hash_mark, fragment = raw.partition("#")
    return head, (fragment if hash_mark else None)


def parse_error(raw: str) -> str | None:
    """``url.Parse(raw)``: ``None`` when Go accepts it, else the error text (``parse "<url>": <reason>``)."""
    head, fragment = _split_fragment(raw)
    try:
        _parse(head)
    except _URLError as error:
        return f"parse {go_quote(head)}: {error.args[0]}"
    if fragment:
        try:
            _unescape(fragment, host=False)
        except _URLError as error:
            return f"parse {go_quote(raw)}: {error.args[0]}"
    return None


def scheme(raw: str) -> str:
    """The lower-cased scheme ``url.Parse`` finds in ``raw`` (``""`` when none or when parsing fails)."""
    try:
        return _parse(_split_fragment(raw)[0])
    except _URLError:
        return ""
