"""decode_text: the text of a file's bytes, or where the first byte that is no text is (line, column in characters,
a UTF-8 BOM not counted, as the decoded text's positions do not count it)."""

from __future__ import annotations

import pytest

from desched.reading.sources import SourceError, decode_text

BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"kind: DeschedulerPolicy\n", "kind: DeschedulerPolicy\n"),
        (BOM + b"a: 1\n", "a: 1\n"),
        (bytearray(b"caf\xc3\xa9"), "caf\u00e9"),
        ("a: \u00e9\n".encode("utf-16"), "a: \u00e9\n"),
    ],
    ids=["ascii", "utf-8-bom", "bytearray", "utf-16"],
)
def test_text_is_decoded(data: bytes | bytearray, text: str) -> None:
    assert decode_text(data) == text


@pytest.mark.parametrize(
    ("data", "byte", "line", "column"),
    [
        (b"ab\xff", 0xFF, 1, 3),
        (BOM + b"ab\xff", 0xFF, 1, 3),
        (BOM + b"a\nb\xffc", 0xFF, 2, 2),
        (BOM + b"a: 1\nb: \xc3", 0xC3, 2, 4),
        (b"\xc3\xa9\xc3\xa9\xff", 0xFF, 1, 3),
        (b"x\n\xff", 0xFF, 2, 1),
    ],
    ids=["ascii", "bom", "bom-second-line", "bom-truncated", "after-two-characters", "line-start"],
)
def test_invalid_utf8_is_placed_at_its_byte(data: bytes, byte: int, line: int, column: int) -> None:
    with pytest.raises(SourceError) as raised:
        decode_text(data)
    assert (raised.value.line, raised.value.column) == (line, column)
    assert f"0x{byte:02x}" in raised.value.message


@pytest.mark.parametrize(
    ("data", "line", "column"),
    [(b"ab\x00", 1, 3), (BOM + b"\x00", 1, 1), (BOM + b"a\n\xc3\xa9\x00", 2, 2)],
    ids=["ascii", "bom", "after-a-character"],
)
def test_binary_is_placed_at_its_first_nul(data: bytes, line: int, column: int) -> None:
    with pytest.raises(SourceError) as raised:
        decode_text(data)
    assert "binary" in raised.value.message
    assert (raised.value.line, raised.value.column) == (line, column)
