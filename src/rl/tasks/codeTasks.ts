// Small programming tasks for the code environment. Each asks for one function, gives a public
// example the agent can print (`publicCall` → `publicOutput`), and keeps hidden inputs for the private
// verifier, which calls the agent's function on them and compares with the reference solution's
// results (computed in a separate sandbox run). Printing a memorised answer passes the public check
// and fails the private one. Every fourth task is held out (never trained on).
export interface CodeTask {
  readonly id: string;
  /** What to write, in one sentence. */
  readonly description: string;
  readonly fn: string;
  /** Python source of a correct solution (defines `fn`). */
  readonly reference: string;
  /** Argument list of the public example, as Python source: printed with print(fn(<args>)). */
  readonly publicArgs: string;
  /** What print(fn(publicArgs)) prints for a correct solution. */
  readonly publicOutput: string;
  /** Argument lists (Python source) for the private verifier. */
  readonly hidden: readonly string[];
  /** compact: a one-line prompt for the generated family (small models pay for every prompt token). */
  readonly promptStyle?: 'full' | 'compact';
}

type Row = [id: string, fn: string, description: string, reference: string, publicArgs: string, publicOutput: string, hidden: string[]];

// Seed 000's three tasks come first (Fibonacci, palindrome, sorting).
const ROWS: Row[] = [
  [
    'fibonacci',
    'fib',
    'return the n-th Fibonacci number with fib(0) = 0 and fib(1) = 1',
    'def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n',
    '10',
    '55',
    ['0', '1', '2', '7', '20', '35'],
  ],
  [
    'palindrome',
    'is_palindrome',
    'return True if the string reads the same forwards and backwards, else False',
    'def is_palindrome(s):\n    return s == s[::-1]\n',
    "'racecar'",
    'True',
    ["''", "'a'", "'ab'", "'abba'", "'abca'", "'noon'", "'Noon'"],
  ],
  [
    'sort-list',
    'sort_list',
    'return the list of numbers sorted in ascending order (a new list)',
    'def sort_list(xs):\n    return sorted(xs)\n',
    '[5, 1, 4, 2, 8]',
    '[1, 2, 4, 5, 8]',
    ['[]', '[3]', '[2, 1]', '[5, -1, 5, 0]', '[9, 8, 7, 6, 5, 4]'],
  ],
  [
    'factorial',
    'factorial',
    'return n! (with 0! = 1)',
    'def factorial(n):\n    r = 1\n    for i in range(2, n + 1):\n        r *= i\n    return r\n',
    '5',
    '120',
    ['0', '1', '3', '10', '15'],
  ],
  [
    'is-prime',
    'is_prime',
    'return True if n is a prime number, else False',
    'def is_prime(n):\n    if n < 2:\n        return False\n    i = 2\n    while i * i <= n:\n        if n % i == 0:\n            return False\n        i += 1\n    return True\n',
    '7',
    'True',
    ['0', '1', '2', '9', '17', '91', '97'],
  ],
  [
    'nth-prime',
    'nth_prime',
    'return the n-th prime number, counting from nth_prime(1) = 2',
    'def nth_prime(n):\n    count, k = 0, 1\n    while count < n:\n        k += 1\n        if all(k % d for d in range(2, int(k ** 0.5) + 1)):\n            count += 1\n    return k\n',
    '5',
    '11',
    ['1', '2', '10', '25'],
  ],
  [
    'primes-below',
    'primes_below',
    'return the list of all primes smaller than n',
    'def primes_below(n):\n    return [k for k in range(2, n) if all(k % d for d in range(2, int(k ** 0.5) + 1))]\n',
    '10',
    '[2, 3, 5, 7]',
    ['0', '2', '3', '20', '30'],
  ],
  [
    'gcd',
    'gcd',
    'return the greatest common divisor of two non-negative integers',
    'def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n',
    '12, 18',
    '6',
    ['7, 13', '0, 5', '100, 75', '81, 27'],
  ],
  [
    'lcm',
    'lcm',
    'return the least common multiple of two positive integers',
    'def lcm(a, b):\n    x, y = a, b\n    while y:\n        x, y = y, x % y\n    return a * b // x\n',
    '4, 6',
    '12',
    ['1, 9', '7, 5', '21, 6', '10, 10'],
  ],
  [
    'sum-digits',
    'sum_digits',
    'return the sum of the decimal digits of a non-negative integer',
    'def sum_digits(n):\n    return sum(int(c) for c in str(n))\n',
    '1234',
    '10',
    ['0', '9', '1001', '987654321'],
  ],
  [
    'digital-root',
    'digital_root',
    'repeatedly sum the digits of n until one digit remains and return it',
    'def digital_root(n):\n    while n >= 10:\n        n = sum(int(c) for c in str(n))\n    return n\n',
    '493193',
    '2',
    ['0', '9', '10', '38', '999999'],
  ],
  [
    'reverse-string',
    'reverse_string',
    'return the string reversed',
    'def reverse_string(s):\n    return s[::-1]\n',
    "'hello'",
    'olleh',
    ["''", "'a'", "'ab c'", "'racecar'"],
  ],
  [
    'count-vowels',
    'count_vowels',
    'return how many vowels (a, e, i, o, u, either case) the string contains',
    "def count_vowels(s):\n    return sum(1 for c in s.lower() if c in 'aeiou')\n",
    "'Hello World'",
    '3',
    ["''", "'xyz'", "'AEIOU'", "'Programming'"],
  ],
  [
    'reverse-words',
    'reverse_words',
    'return the words of the sentence in reverse order, joined by single spaces',
    'def reverse_words(s):\n    return " ".join(reversed(s.split()))\n',
    "'the quick brown fox'",
    'fox brown quick the',
    ["''", "'one'", "'  a  b '", "'x y z'"],
  ],
  [
    'capitalize-words',
    'capitalize_words',
    'return the sentence with the first letter of every word upper-cased and the rest lower-cased',
    'def capitalize_words(s):\n    return " ".join(w[:1].upper() + w[1:].lower() for w in s.split(" "))\n',
    "'hello world'",
    'Hello World',
    ["''", "'a'", "'mIXed CASE words'", "'x  y'"],
  ],
  [
    'word-count',
    'word_count',
    'return the number of words (separated by whitespace) in the string',
    'def word_count(s):\n    return len(s.split())\n',
    "'to be or not to be'",
    '6',
    ["''", "'   '", "'one'", "'a\\tb\\nc'"],
  ],
  [
    'char-frequency',
    'char_frequency',
    'return a dict mapping each character to how often it occurs',
    'def char_frequency(s):\n    d = {}\n    for c in s:\n        d[c] = d.get(c, 0) + 1\n    return d\n',
    "'aab'",
    "{'a': 2, 'b': 1}",
    ["''", "'abc'", "'mississippi'"],
  ],
  [
    'anagram',
    'is_anagram',
    'return True if the two strings are anagrams of each other (same letters, same counts), else False',
    'def is_anagram(a, b):\n    return sorted(a) == sorted(b)\n',
    "'listen', 'silent'",
    'True',
    ["'', ''", "'a', 'b'", "'abc', 'cab'", "'aab', 'abb'"],
  ],
  [
    'run-length',
    'run_length_encode',
    "return the run-length encoding of the string, e.g. 'aaab' -> 'a3b1'",
    'def run_length_encode(s):\n    out = []\n    i = 0\n    while i < len(s):\n        j = i\n        while j < len(s) and s[j] == s[i]:\n            j += 1\n        out.append(s[i] + str(j - i))\n        i = j\n    return "".join(out)\n',
    "'aaabcc'",
    'a3b1c2',
    ["''", "'a'", "'abc'", "'zzzzzzzzzzzz'"],
  ],
  [
    'caesar',
    'caesar',
    'shift every lower-case letter of the string forward by k places in the alphabet (wrapping around); leave other characters unchanged',
    "def caesar(s, k):\n    return ''.join(chr((ord(c) - 97 + k) % 26 + 97) if 'a' <= c <= 'z' else c for c in s)\n",
    "'abc', 1",
    'bcd',
    ["'xyz', 3", "'hello, world', 13", "'', 5", "'abc', 26"],
  ],
  [
    'max-list',
    'max_value',
    'return the largest number in a non-empty list (without using max)',
    'def max_value(xs):\n    best = xs[0]\n    for x in xs[1:]:\n        if x > best:\n            best = x\n    return best\n',
    '[3, 9, 2]',
    '9',
    ['[1]', '[-5, -2, -9]', '[4, 4, 4]', '[0, 100, 99]'],
  ],
  [
    'second-largest',
    'second_largest',
    'return the second largest distinct value in the list, or None if there is none',
    'def second_largest(xs):\n    vals = sorted(set(xs))\n    return vals[-2] if len(vals) >= 2 else None\n',
    '[4, 1, 7, 7, 3]',
    '4',
    ['[]', '[5]', '[5, 5]', '[1, 2]', '[-1, -3, -2]'],
  ],
  [
    'remove-duplicates',
    'remove_duplicates',
    'return the list without duplicates, keeping the first occurrence of each value in order',
    'def remove_duplicates(xs):\n    seen, out = set(), []\n    for x in xs:\n        if x not in seen:\n            seen.add(x)\n            out.append(x)\n    return out\n',
    '[1, 2, 1, 3, 2]',
    '[1, 2, 3]',
    ['[]', '[7, 7, 7]', "['b', 'a', 'b']", '[3, 2, 1]'],
  ],
  [
    'flatten',
    'flatten',
    'return a flat list of all the values in an arbitrarily nested list',
    'def flatten(xs):\n    out = []\n    for x in xs:\n        if isinstance(x, list):\n            out.extend(flatten(x))\n        else:\n            out.append(x)\n    return out\n',
    '[1, [2, [3, 4]], 5]',
    '[1, 2, 3, 4, 5]',
    ['[]', '[[[]]]', '[[1], [2], [[3]]]', '[0, [False]]'],
  ],
  [
    'chunk-list',
    'chunk',
    'split the list into consecutive chunks of size n (the last may be shorter) and return the list of chunks',
    'def chunk(xs, n):\n    return [xs[i:i + n] for i in range(0, len(xs), n)]\n',
    '[1, 2, 3, 4, 5], 2',
    '[[1, 2], [3, 4], [5]]',
    ['[], 3', '[1, 2, 3], 1', '[1, 2, 3], 5', '[1, 2, 3, 4], 2'],
  ],
  [
    'rotate-list',
    'rotate',
    'return the list rotated right by k positions',
    'def rotate(xs, k):\n    if not xs:\n        return []\n    k %= len(xs)\n    return xs[-k:] + xs[:-k] if k else list(xs)\n',
    '[1, 2, 3, 4, 5], 2',
    '[4, 5, 1, 2, 3]',
    ['[], 3', '[1], 7', '[1, 2, 3], 3', '[1, 2, 3], 4'],
  ],
  [
    'running-sum',
    'running_sum',
    'return the list of running totals of the list',
    'def running_sum(xs):\n    out, t = [], 0\n    for x in xs:\n        t += x\n        out.append(t)\n    return out\n',
    '[1, 2, 3, 4]',
    '[1, 3, 6, 10]',
    ['[]', '[5]', '[-1, 1, -1]', '[0, 0, 7]'],
  ],
  [
    'pairwise-diff',
    'pairwise_diff',
    'return the list of differences between consecutive elements (next minus current)',
    'def pairwise_diff(xs):\n    return [b - a for a, b in zip(xs, xs[1:])]\n',
    '[1, 4, 9, 16]',
    '[3, 5, 7]',
    ['[]', '[3]', '[5, 5, 5]', '[10, 0, -10]'],
  ],
  [
    'max-subarray',
    'max_subarray',
    'return the largest sum of a non-empty contiguous sub-list',
    'def max_subarray(xs):\n    best = cur = xs[0]\n    for x in xs[1:]:\n        cur = max(x, cur + x)\n        best = max(best, cur)\n    return best\n',
    '[-2, 1, -3, 4, -1, 2, 1, -5, 4]',
    '6',
    ['[1]', '[-3, -1, -2]', '[5, -1, 5]', '[2, 3, -10, 4]'],
  ],
  [
    'two-sum',
    'two_sum',
    'return the indices [i, j] (i < j) of the first pair, in order of j then i, whose values add up to target, or None',
    'def two_sum(xs, target):\n    for j in range(len(xs)):\n        for i in range(j):\n            if xs[i] + xs[j] == target:\n                return [i, j]\n    return None\n',
    '[2, 7, 11, 15], 9',
    '[0, 1]',
    ['[], 1', '[1, 2, 3], 7', '[3, 3], 6', '[1, 5, 2, 4], 6'],
  ],
  [
    'binary-string',
    'to_binary',
    'return the binary representation of a non-negative integer as a string without prefix',
    'def to_binary(n):\n    return bin(n)[2:]\n',
    '10',
    '1010',
    ['0', '1', '2', '255', '1024'],
  ],
  [
    'from-binary',
    'from_binary',
    'return the integer value of a string of binary digits',
    'def from_binary(s):\n    v = 0\n    for c in s:\n        v = v * 2 + int(c)\n    return v\n',
    "'1010'",
    '10',
    ["'0'", "'1'", "'11111111'", "'100000'"],
  ],
  [
    'count-bits',
    'count_bits',
    'return the number of 1 bits in the binary representation of a non-negative integer',
    "def count_bits(n):\n    return bin(n).count('1')\n",
    '13',
    '3',
    ['0', '1', '255', '1024', '1023'],
  ],
  [
    'power-of-two',
    'is_power_of_two',
    'return True if n is a power of two (1, 2, 4, ...), else False',
    'def is_power_of_two(n):\n    return n > 0 and n & (n - 1) == 0\n',
    '16',
    'True',
    ['0', '1', '3', '64', '96', '-8'],
  ],
  [
    'collatz',
    'collatz_steps',
    'return how many steps the Collatz process (n/2 if even, 3n+1 if odd) takes to reach 1',
    'def collatz_steps(n):\n    steps = 0\n    while n != 1:\n        n = n // 2 if n % 2 == 0 else 3 * n + 1\n        steps += 1\n    return steps\n',
    '6',
    '8',
    ['1', '2', '7', '27'],
  ],
  [
    'triangle',
    'triangle_number',
    'return the n-th triangle number 1 + 2 + ... + n',
    'def triangle_number(n):\n    return n * (n + 1) // 2\n',
    '4',
    '10',
    ['0', '1', '10', '100'],
  ],
  [
    'leap-year',
    'is_leap',
    'return True if the year is a Gregorian leap year, else False',
    'def is_leap(y):\n    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)\n',
    '2024',
    'True',
    ['1900', '2000', '2023', '2100', '4'],
  ],
  [
    'celsius',
    'to_fahrenheit',
    'convert degrees Celsius to Fahrenheit and return the value rounded to one decimal place',
    'def to_fahrenheit(c):\n    return round(c * 9 / 5 + 32, 1)\n',
    '100',
    '212.0',
    ['0', '-40', '37', '21.5'],
  ],
  [
    'fizzbuzz',
    'fizzbuzz',
    "return the list of FizzBuzz strings for 1..n ('Fizz' for multiples of 3, 'Buzz' of 5, 'FizzBuzz' of both, else the number as a string)",
    "def fizzbuzz(n):\n    out = []\n    for i in range(1, n + 1):\n        s = ('Fizz' if i % 3 == 0 else '') + ('Buzz' if i % 5 == 0 else '')\n        out.append(s or str(i))\n    return out\n",
    '5',
    "['1', '2', 'Fizz', '4', 'Buzz']",
    ['0', '1', '15', '16'],
  ],
  [
    'sum-multiples',
    'sum_multiples',
    'return the sum of all numbers below n that are multiples of 3 or 5',
    'def sum_multiples(n):\n    return sum(i for i in range(n) if i % 3 == 0 or i % 5 == 0)\n',
    '10',
    '23',
    ['0', '1', '16', '1000'],
  ],
  [
    'perfect-number',
    'is_perfect',
    'return True if n equals the sum of its proper divisors, else False',
    'def is_perfect(n):\n    return n > 1 and sum(d for d in range(1, n) if n % d == 0) == n\n',
    '28',
    'True',
    ['1', '6', '12', '496', '500'],
  ],
  [
    'armstrong',
    'is_armstrong',
    'return True if n equals the sum of its digits each raised to the number of digits, else False',
    'def is_armstrong(n):\n    s = str(n)\n    return n == sum(int(c) ** len(s) for c in s)\n',
    '153',
    'True',
    ['0', '10', '370', '371', '9474', '9475'],
  ],
  [
    'matrix-transpose',
    'transpose',
    'return the transpose of a rectangular matrix given as a list of rows',
    'def transpose(m):\n    return [list(r) for r in zip(*m)]\n',
    '[[1, 2, 3], [4, 5, 6]]',
    '[[1, 4], [2, 5], [3, 6]]',
    ['[]', '[[1]]', '[[1, 2]]', '[[1], [2], [3]]'],
  ],
  [
    'matrix-sum',
    'matrix_sum',
    'return the sum of all numbers in a matrix given as a list of rows',
    'def matrix_sum(m):\n    return sum(sum(r) for r in m)\n',
    '[[1, 2], [3, 4]]',
    '10',
    ['[]', '[[]]', '[[5]]', '[[1, -1], [2, -2], [3, 3]]'],
  ],
  [
    'diagonal-sum',
    'diagonal_sum',
    'return the sum of the main diagonal of a square matrix',
    'def diagonal_sum(m):\n    return sum(m[i][i] for i in range(len(m)))\n',
    '[[1, 2], [3, 4]]',
    '5',
    ['[]', '[[7]]', '[[1, 2, 3], [4, 5, 6], [7, 8, 9]]'],
  ],
  [
    'mean',
    'mean',
    'return the arithmetic mean of a non-empty list of numbers rounded to two decimal places',
    'def mean(xs):\n    return round(sum(xs) / len(xs), 2)\n',
    '[1, 2, 3, 4]',
    '2.5',
    ['[5]', '[1, 2]', '[1, 1, 2]', '[-3, 3, 10]'],
  ],
  [
    'median',
    'median',
    'return the median of a non-empty list of numbers (the mean of the two middle values for even length)',
    'def median(xs):\n    s = sorted(xs)\n    n = len(s)\n    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2\n',
    '[3, 1, 2]',
    '2',
    ['[5]', '[1, 2]', '[4, 1, 3, 2]', '[7, 7, 1]'],
  ],
  [
    'mode',
    'mode',
    'return the most frequent value in a non-empty list; on a tie, the smallest such value',
    'def mode(xs):\n    counts = {}\n    for x in xs:\n        counts[x] = counts.get(x, 0) + 1\n    best = max(counts.values())\n    return min(x for x, c in counts.items() if c == best)\n',
    '[1, 2, 2, 3]',
    '2',
    ['[5]', '[1, 1, 2, 2]', '[3, 3, 1, 1, 1]', '[-1, -2]'],
  ],
  [
    'merge-sorted',
    'merge_sorted',
    'merge two ascending lists into one ascending list',
    'def merge_sorted(a, b):\n    i = j = 0\n    out = []\n    while i < len(a) and j < len(b):\n        if a[i] <= b[j]:\n            out.append(a[i])\n            i += 1\n        else:\n            out.append(b[j])\n            j += 1\n    return out + a[i:] + b[j:]\n',
    '[1, 3, 5], [2, 4]',
    '[1, 2, 3, 4, 5]',
    ['[], []', '[1], []', '[], [2, 3]', '[1, 1], [1, 2]'],
  ],
  [
    'binary-search',
    'binary_search',
    'return the index of target in the ascending list, or -1 if it is absent',
    'def binary_search(xs, target):\n    lo, hi = 0, len(xs) - 1\n    while lo <= hi:\n        mid = (lo + hi) // 2\n        if xs[mid] == target:\n            return mid\n        if xs[mid] < target:\n            lo = mid + 1\n        else:\n            hi = mid - 1\n    return -1\n',
    '[1, 3, 5], 3',
    '1',
    ['[], 1', '[1, 3, 5, 7, 9], 9', '[1, 3, 5, 7, 9], 1', '[1, 3, 5], 4', '[2], 1'],
  ],
  [
    'balanced-brackets',
    'is_balanced',
    'return True if every bracket in the string ( ) [ ] { } is properly matched and nested, else False',
    "def is_balanced(s):\n    pairs = {')': '(', ']': '[', '}': '{'}\n    stack = []\n    for c in s:\n        if c in '([{':\n            stack.append(c)\n        elif c in pairs:\n            if not stack or stack.pop() != pairs[c]:\n                return False\n    return not stack\n",
    "'([]{})'",
    'True',
    ["''", "'('", "')('", "'([)]'", "'a(b)c'"],
  ],
  [
    'roman',
    'to_roman',
    'return the Roman numeral for an integer from 1 to 3999',
    "def to_roman(n):\n    vals = [(1000, 'M'), (900, 'CM'), (500, 'D'), (400, 'CD'), (100, 'C'), (90, 'XC'), (50, 'L'), (40, 'XL'), (10, 'X'), (9, 'IX'), (5, 'V'), (4, 'IV'), (1, 'I')]\n    out = ''\n    for v, s in vals:\n        while n >= v:\n            out += s\n            n -= v\n    return out\n",
    '14',
    'XIV',
    ['1', '4', '9', '40', '1994', '3999'],
  ],
  [
    'from-roman',
    'from_roman',
    'return the integer value of a Roman numeral',
    "def from_roman(s):\n    v = {'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}\n    total = 0\n    for i, c in enumerate(s):\n        if i + 1 < len(s) and v[c] < v[s[i + 1]]:\n            total -= v[c]\n        else:\n            total += v[c]\n    return total\n",
    "'XIV'",
    '14',
    ["'I'", "'IV'", "'MCMXCIV'", "'MMMCMXCIX'"],
  ],
  [
    'vowel-positions',
    'vowel_positions',
    'return the list of indices at which the string has a lower-case vowel',
    "def vowel_positions(s):\n    return [i for i, c in enumerate(s) if c in 'aeiou']\n",
    "'banana'",
    '[1, 3, 5]',
    ["''", "'xyz'", "'aeiou'", "'Apple'"],
  ],
  [
    'longest-word',
    'longest_word',
    'return the longest word in the sentence (the first one on a tie)',
    'def longest_word(s):\n    best = ""\n    for w in s.split():\n        if len(w) > len(best):\n            best = w\n    return best\n',
    "'a quick brown fox'",
    'quick',
    ["''", "'one'", "'ab cd ef'", "'hi there everybody'"],
  ],
  [
    'acronym',
    'acronym',
    'return the upper-case initials of the words in the phrase',
    'def acronym(s):\n    return "".join(w[0].upper() for w in s.split())\n',
    "'portable network graphics'",
    'PNG',
    ["''", "'a'", "'As Soon As Possible'", "'x y'"],
  ],
  [
    'apples',
    'apples_left',
    'a basket holds n apples; each of k children takes m apples while enough are left; return how many apples remain',
    'def apples_left(n, k, m):\n    for _ in range(k):\n        if n >= m:\n            n -= m\n    return n\n',
    '20, 3, 4',
    '8',
    ['0, 3, 1', '10, 5, 3', '7, 0, 2', '100, 10, 10'],
  ],
  [
    'change-coins',
    'min_coins',
    'return the fewest coins of values 1, 5, 10 and 25 that add up to the amount',
    'def min_coins(amount):\n    count = 0\n    for c in (25, 10, 5, 1):\n        count += amount // c\n        amount %= c\n    return count\n',
    '30',
    '2',
    ['0', '1', '41', '99'],
  ],
  [
    'train-distance',
    'distance',
    'a train travels at v km/h for t hours, then at w km/h for u hours; return the total distance in km',
    'def distance(v, t, w, u):\n    return v * t + w * u\n',
    '60, 2, 80, 1',
    '200',
    ['0, 0, 0, 0', '100, 1, 50, 3', '90, 0, 10, 10'],
  ],
  [
    'shopping',
    'total_cost',
    'return the total price of a shopping list given as [price, quantity] pairs',
    'def total_cost(items):\n    return sum(p * q for p, q in items)\n',
    '[[3, 2], [5, 1]]',
    '11',
    ['[]', '[[10, 0]]', '[[1, 1], [2, 2], [3, 3]]'],
  ],
  [
    'age-difference',
    'years_until_double',
    'a parent is p years old and a child c years old; return in how many years the parent will be exactly twice as old (or -1 if that is in the past or never)',
    'def years_until_double(p, c):\n    x = p - 2 * c\n    return x if x >= 0 else -1\n',
    '40, 10',
    '20',
    ['30, 15', '30, 20', '50, 5', '20, 10'],
  ],
  [
    'pages-read',
    'days_to_finish',
    'a book has n pages; a reader reads p pages a day; return how many days it takes to finish',
    'def days_to_finish(n, p):\n    return (n + p - 1) // p\n',
    '100, 30',
    '4',
    ['0, 5', '10, 10', '11, 10', '1, 100'],
  ],
  [
    'stairs',
    'climb_ways',
    'return in how many distinct ways one can climb n stairs taking 1 or 2 steps at a time',
    'def climb_ways(n):\n    a, b = 1, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n',
    '4',
    '5',
    ['0', '1', '2', '10', '20'],
  ],
  [
    'pascal-row',
    'pascal_row',
    "return row n of Pascal's triangle (row 0 is [1])",
    'def pascal_row(n):\n    row = [1]\n    for _ in range(n):\n        row = [a + b for a, b in zip([0] + row, row + [0])]\n    return row\n',
    '4',
    '[1, 4, 6, 4, 1]',
    ['0', '1', '2', '6'],
  ],
  [
    'common-elements',
    'common',
    'return the sorted list of distinct values present in both lists',
    'def common(a, b):\n    return sorted(set(a) & set(b))\n',
    '[1, 2, 3], [2, 3, 4]',
    '[2, 3]',
    ['[], [1]', '[1, 1], [1]', '[5, 4], [4, 5, 6]', '[1], [2]'],
  ],
];

export const CODE_TASKS: readonly (CodeTask & { readonly split: 'train' | 'heldOut' })[] = ROWS.map(
  ([id, fn, description, reference, publicArgs, publicOutput, hidden], i) => ({
    id: `code:${id}`,
    fn,
    description,
    reference,
    publicArgs,
    publicOutput,
    hidden,
    split: i % 4 === 3 ? 'heldOut' : 'train',
  }),
);

export function codeTaskPrompt(t: CodeTask): string {
  if (t.promptStyle === 'compact') {
    return `Write ${t.fn}(x): ${t.description}. Print ${t.fn}(${t.publicArgs}) in a \`\`\`python block, then reply FINAL ANSWER: and the printed value.\n`;
  }
  return (
    `Write a Python function ${t.fn} that should ${t.description}. ` +
    `Then print ${t.fn}(${t.publicArgs}); it should print ${t.publicOutput}. ` +
    'Run code by writing a ```python block; read the output; fix errors; when it is right, reply FINAL ANSWER: followed by the printed value.'
  );
}

/** Inputs on which two formulas must agree to count as the same function (a held-out split by function). */
const PROBES = [-7, -3, -1, 0, 1, 2, 3, 5, 10, 100];

type Form = readonly [form: string, value: (x: number, a: number, b: number) => number];

/** The formula tasks' five forms (training and validation). */
const FORMULA_FORMS: readonly Form[] = [
  ['a*x+b', (x, a, b) => a * x + b],
  ['a*x-b', (x, a, b) => a * x - b],
  ['x*x+a*b', (x, a, b) => x * x + a * b],
  ['a*(x+b)', (x, a, b) => a * (x + b)],
  ['x*a-b*x', (x, a, b) => x * a - b * x],
];

/** One formula task: f(x) = the form with a and b filled in, its public example at x = 2 + (a + b) mod 3. */
function formulaTask(form: string, value: Form[1], a: number, b: number): CodeTask {
  const expr = form.replace('a', String(a)).replace('b', String(b));
  const x = 2 + ((a + b) % 3);
  return {
    id: `code:f=${expr}`,
    fn: 'f',
    description: `return ${expr} for an integer x`,
    reference: `def f(x):\n    return ${expr}\n`,
    publicArgs: String(x),
    publicOutput: String(value(x, a, b)),
    hidden: ['0', '1', '-3', '7', '10'],
    promptStyle: 'compact',
  };
}

/**
 * A generated family of one-line tasks, `f(x) = <formula>` with small integer constants, for models
 * trained here from scratch: what a held-out task asks is new (unseen constants and combinations),
 * the skill is not (read the formula, write it as Python, print the example, report it). About one
 * task in four is held out, chosen by a fixed hash of the function's values on probe inputs, so a
 * held-out task never computes the same function as a training one (x*x+2*3 and x*x+3*2 and
 * x*x+1*6 are one function, in one split). That split was looked at while designing the learning
 * checks: it is a validation split; `formulaTestTasks` is the test split.
 */
export function formulaTasks(): readonly (CodeTask & { readonly split: 'train' | 'heldOut' })[] {
  const out: (CodeTask & { split: 'train' | 'heldOut' })[] = [];
  for (const [form, value] of FORMULA_FORMS) {
    for (let a = 1; a <= 9; a++) {
      for (let b = 1; b <= 9; b++) {
        let h = 0;
        for (const c of PROBES.map((p) => value(p, a, b)).join(',')) h = (h * 31 + c.charCodeAt(0)) >>> 0;
        out.push({ ...formulaTask(form, value, a, b), split: h % 4 === 3 ? 'heldOut' : 'train' });
      }
    }
  }
  return out;
}

/** Each task of these forms with a + b even whose function (its values on the probe inputs) is not in `taken`, each function once. */
function familyTasks(forms: readonly Form[], taken: ReadonlySet<string>): CodeTask[] {
  const out: CodeTask[] = [];
  const seen = new Set(taken);
  for (const [form, value] of forms)
    for (let a = 1; a <= 9; a++)
      for (let b = 1; b <= 9; b++) {
        const fn = probeValues(value, a, b);
        if ((a + b) % 2 !== 0 || seen.has(fn)) continue;
        seen.add(fn);
        out.push(formulaTask(form, value, a, b));
      }
  return out;
}

const probeValues = (value: Form[1], a: number, b: number): string => PROBES.map((p) => value(p, a, b)).join(',');

/** The functions of these forms, by their values on the probe inputs (constants 1–9). */
function functionsOf(forms: readonly Form[]): Set<string> {
  const out = new Set<string>();
  for (const [, value] of forms) for (let a = 1; a <= 9; a++) for (let b = 1; b <= 9; b++) out.add(probeValues(value, a, b));
  return out;
}

/**
 * The test split of the formula tasks (verify:seed000's; written down before its first run and never
 * used while designing): four function families that no training task has — a*x*x+b, b-a*x,
 * x*(x+a)-b, (x-a)*(x+b) — with the same constants 1–9, the (a, b) pairs of each family with a + b
 * even, less any task whose values on the probe inputs equal those of a formula task (1*x*x+b is
 * x*x+1*b): what differs from training is the shape of the formula, never a function it trains on.
 */
const TEST_FORMS: readonly Form[] = [
  ['a*x*x+b', (x, a, b) => a * x * x + b],
  ['b-a*x', (x, a, b) => b - a * x],
  ['x*(x+a)-b', (x, a, b) => x * (x + a) - b],
  ['(x-a)*(x+b)', (x, a, b) => (x - a) * (x + b)],
];

export function formulaTestTasks(): readonly CodeTask[] {
  return familyTasks(TEST_FORMS, functionsOf(FORMULA_FORMS));
}

/**
 * A validation split of new formula families, for designing what the test split measures (looked at
 * freely): a*x*x-b, a*(x-b), x*x-a*x, x*(x-a)+b, the same constants and selection, less any function
 * of a training or a test task.
 */
const VALIDATION_FORMS: readonly Form[] = [
  ['a*x*x-b', (x, a, b) => a * x * x - b],
  ['a*(x-b)', (x, a, b) => a * (x - b)],
  ['x*x-a*x', (x, a) => x * x - a * x],
  ['x*(x-a)+b', (x, a, b) => x * (x - a) + b],
];

export function formulaValidationTasks(): readonly CodeTask[] {
  return familyTasks(VALIDATION_FORMS, new Set([...functionsOf(FORMULA_FORMS), ...functionsOf(TEST_FORMS)]));
}

type Shape =
  { readonly kind: 'leaf'; readonly name: 'x' | 'a' | 'b' } | { readonly kind: 'op'; readonly op: '+' | '-' | '*'; readonly l: Shape; readonly r: Shape };

const PRECEDENCE = { '+': 1, '-': 1, '*': 2 } as const;

function shapeText(s: Shape): string {
  if (s.kind === 'leaf') return s.name;
  const side = (c: Shape, right: boolean): string => {
    const t = shapeText(c);
    if (c.kind === 'leaf') return t;
    const [pc, pp] = [PRECEDENCE[c.op], PRECEDENCE[s.op]];
    return pc < pp || (right && pc === pp) ? `(${t})` : t;
  };
  return `${side(s.l, false)}${s.op}${side(s.r, true)}`;
}

function shapeValue(s: Shape, x: number, a: number, b: number): number {
  if (s.kind === 'leaf') return s.name === 'x' ? x : s.name === 'a' ? a : b;
  const [l, r] = [shapeValue(s.l, x, a, b), shapeValue(s.r, x, a, b)];
  return s.op === '+' ? l + r : s.op === '-' ? l - r : l * r;
}

/**
 * Every formula shape of up to four leaves (x at most twice, a and b at most once each, x at least
 * once; b only beside a), built left-associatively (a right operand never has its parent's precedence),
 * one shape per function (a*x and x*a are one; none constant in x), in a fixed order.
 */
function allShapes(): Form[] {
  const leaves: Shape[] = (['x', 'a', 'b'] as const).map((name) => ({ kind: 'leaf', name }));
  const count = (s: Shape, n: string): number => (s.kind === 'leaf' ? (s.name === n ? 1 : 0) : count(s.l, n) + count(s.r, n));
  const size = (s: Shape): number => (s.kind === 'leaf' ? 1 : size(s.l) + size(s.r));
  const bySize: Shape[][] = [[], leaves];
  for (let n = 2; n <= 4; n++) {
    const made: Shape[] = [];
    for (let k = 1; k < n; k++)
      for (const l of bySize[k]!)
        for (const r of bySize[n - k]!)
          for (const op of ['+', '-', '*'] as const) {
            if (r.kind === 'op' && PRECEDENCE[r.op] === PRECEDENCE[op]) continue;
            const s: Shape = { kind: 'op', op, l, r };
            if (count(s, 'x') <= 2 && count(s, 'a') <= 1 && count(s, 'b') <= 1) made.push(s);
          }
    bySize.push(made);
  }
  const grid = [1, 2, 3, 5, 8].flatMap((a) => [1, 4, 7].map((b) => [a, b] as const));
  const seen = new Set<string>();
  const out: Form[] = [];
  for (const s of bySize.flat()) {
    if (size(s) < 2 || count(s, 'x') === 0 || (count(s, 'a') === 0 && count(s, 'b') > 0)) continue;
    const sig = grid.map(([a, b]) => PROBES.map((x) => shapeValue(s, x, a, b)).join(',')).join(';');
    // x-x+a is no function of x
    if (seen.has(sig) || grid.every(([a, b]) => PROBES.every((x) => shapeValue(s, x, a, b) === shapeValue(s, 0, a, b)))) continue;
    seen.add(sig);
    out.push([shapeText(s), (x, a, b) => shapeValue(s, x, a, b)]);
  }
  return out;
}

/** A form's text with every minus a plus, and with a and b swapped too: its shape up to signs and names. */
function skeletons(form: string): string[] {
  const plus = form.replace(/-/g, '+');
  return [plus, plus.replace(/a/g, '#').replace(/b/g, 'a').replace(/#/g, 'b')];
}

/**
 * A training set of many formula shapes (every shape of `allShapes` but those of the validation and
 * test families and their sign variants — x*(x+a)+b is x*(x+a)-b's — and but any task whose function a
 * validation or test task computes), the (a, b) pairs with a + b odd (the validation and test families
 * take the even ones), each function once; one function in four held out by a hash of its values, as
 * the formula tasks are. Shapes enough that copying a formula, not recalling five, is what a model
 * learns; what verify:seed000 trains on.
 */
export function formulaShapeTasks(): readonly (CodeTask & { readonly split: 'train' | 'heldOut' })[] {
  const reserved = [...TEST_FORMS, ...VALIDATION_FORMS];
  const banned = new Set(reserved.flatMap(([form]) => skeletons(form)));
  const taken = new Set([...functionsOf(TEST_FORMS), ...functionsOf(VALIDATION_FORMS)]);
  const out: (CodeTask & { split: 'train' | 'heldOut' })[] = [];
  for (const [form, value] of allShapes()) {
    if (skeletons(form).some((k) => banned.has(k))) continue;
    for (let a = 1; a <= 9; a++)
      for (let b = 1; b <= 9; b++) {
        const fn = probeValues(value, a, b);
        if ((a + b) % 2 === 0 || taken.has(fn)) continue;
        taken.add(fn);
        let h = 0;
        for (const c of fn) h = (h * 31 + c.charCodeAt(0)) >>> 0;
        out.push({ ...formulaTask(form, value, a, b), split: h % 4 === 3 ? 'heldOut' : 'train' });
      }
  }
  return out;
}
