"""Go's ``sort.Slice``: the order upstream's unstable sorts leave equal elements in
(docs/executor-semantics.md#12-listing-orders).

Contract: :func:`sort_slice` sorts a list in place with the steps Go's ``sort.Slice`` takes (pattern-defeating
quicksort since Go 1.19: insertion sort up to 12 elements, median-of-three or Tukey's ninther pivots, a partial
insertion sort when the input looks sorted, a partition of elements equal to the pivot, deterministic pattern breaking
seeded by the length, heapsort after too many unbalanced partitions), calling ``less(x, y)`` on the elements where Go
calls ``less(i, j)`` on their indices. The result is therefore Go's for any ``less``, also one that is not a strict
order: several of upstream's comparators answer true for both orders of an equal pair, and then even an insertion sort
moves equal elements. Checked against Go 1.19.8's ``sort.Slice`` on generated inputs
(tests/executor/test_gosort.py, vectors from tests/executor/tables/gosort/).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
_MAX_INSERTION = 12
_SHORTEST_NINTHER = 50
_MAX_SWAPS = 4 * 3
_SHORTEST_SHIFTING = 50
_MAX_STEPS = 5
_MASK64 = (1 << 64) - 1
_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2


def sort_slice(items: list[T], less: Callable[[T, T], bool]) -> list[T]:
    """``items`` sorted in place as Go's ``sort.Slice(items, less)`` sorts it; returns ``items``."""
    _Sort(items, less).pdqsort(0, len(items), len(items).bit_length())
    return items


class _Sort:
    """One run of the algorithm over ``data``; the methods keep Go's names and index arithmetic."""

    def __init__(self, data: list[T], less: Callable[[T, T], bool]) -> None:
        self.data = data
        self.compare = less

    def less(self, i: int, j: int) -> bool:
        return self.compare(self.data[i], self.data[j])

    def swap(self, i: int, j: int) -> None:
        data = self.data
        data[i], data[j] = data[j], data[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, hi = a, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(0, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        was_balanced = was_partitioned = True
        while True:
            length = b - a
            if length <= _MAX_INSERTION:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if was_balanced and was_partitioned and hint == _INCREASING and self.partial_insertion_sort(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, was_partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                was_balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i, j = i + 1, j - 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i, j = i + 1, j - 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i, j = i + 1, j - 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        i = a + 1
        for _ in range(_MAX_STEPS):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < _SHORTEST_SHIFTING:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:  # the smaller one to the left
                for j in range(i - 1, 0, -1):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:  # the greater one to the right
                for j in range(i + 1, b):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length  # Go's xorshift, seeded with the length: the same swaps every time
        modulus = 1 << length.bit_length()
        middle = a + (length // 4) * 2
        for index in range(middle - 1, middle + 2):
            state ^= (state << 13) & _MASK64
            state ^= state >> 17
            state ^= (state << 5) & _MASK64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(index, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        length = b - a
        swaps = [0]
        i, j, k = a + length // 4, a + length // 4 * 2, a + length // 4 * 3
        if length >= 8:
            if length >= _SHORTEST_NINTHER:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        return j, _DECREASING if swaps[0] == _MAX_SWAPS else _UNKNOWN

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i, j = i + 1, j - 1
