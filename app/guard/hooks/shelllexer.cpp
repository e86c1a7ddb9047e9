#include "shelllexer.h"

#include <utility>

namespace shelllexer {

namespace {

constexpr qsizetype kMaxChars = 256 * 1024;
constexpr std::size_t kMaxTokens = 20'000;

bool isBreak(QChar c)
{
    switch (c.unicode()) {
    case ' ':
    case '\t':
    case '\r':
    case '\n':
    case ';':
    case '&':
    case '|':
    case '(':
    case ')':
    case '<':
    case '>':
        return true;
    default:
        return false;
    }
}

// From the '(' at `i` to just past its matching ')', minding quotes; the end when unclosed.
qsizetype skipBalanced(const QString &s, qsizetype i, QString *text = nullptr)
{
    const qsizetype start = i;
    int depth = 0;
    QChar quote;
    for (; i < s.size(); ++i) {
        const QChar c = s[i];
        if (!quote.isNull()) {
            if (c == QLatin1Char('\\') && quote == QLatin1Char('"'))
                ++i;
            else if (c == quote)
                quote = QChar();
            continue;
        }
        if (c == QLatin1Char('\\')) {
            ++i;
        } else if (c == QLatin1Char('\'') || c == QLatin1Char('"')) {
            quote = c;
        } else if (c == QLatin1Char('(')) {
            ++depth;
        } else if (c == QLatin1Char(')') && --depth == 0) {
            ++i;
            break;
        }
    }
    i = std::min(i, s.size());
    if (text)
        *text += s.mid(start, i - start);
    return i;
}

// Past the closing backquote of the one at `i`.
qsizetype skipBackquoted(const QString &s, qsizetype i, QString *text)
{
    const qsizetype start = i++;
    while (i < s.size() && s[i] != QLatin1Char('`'))
        i += s[i] == QLatin1Char('\\') ? 2 : 1;
    i = std::min(i + 1, s.size());
    *text += s.mid(start, i - start);
    return i;
}

// A $ expansion at `i` ($NAME, ${...}, $(...), $'...'), appended as written.
qsizetype skipExpansion(const QString &s, qsizetype i, QString *text)
{
    if (i + 1 < s.size() && s[i + 1] == QLatin1Char('(')) {
        text->append(QLatin1Char('$'));
        return skipBalanced(s, i + 1, text);
    }
    if (i + 1 < s.size() && s[i + 1] == QLatin1Char('{')) {
        const qsizetype close = s.indexOf(QLatin1Char('}'), i);
        const qsizetype end = close < 0 ? s.size() : close + 1;
        *text += s.mid(i, end - i);
        return end;
    }
    text->append(QLatin1Char('$'));
    return i + 1;
}

// One word from `i`: its unquoted text, and whether only the running shell knows its value.
qsizetype readWord(const QString &s, qsizetype i, Token &w)
{
    bool braceOpen = false;
    if (s[i] == QLatin1Char('~') && i + 1 < s.size() && s[i + 1] != QLatin1Char('/') &&
        !isBreak(s[i + 1]))
        w.dynamic = true; // ~user
    auto quotedHere = [&w] {
        if (!w.text.contains(QLatin1Char('=')))
            w.quotedName = true;
    };
    while (i < s.size() && !isBreak(s[i])) {
        const QChar c = s[i];
        if (c == QLatin1Char('\\')) {
            if (i + 1 < s.size() && s[i + 1] != QLatin1Char('\n'))
                w.text += s[i + 1];
            quotedHere();
            i += 2;
        } else if (c == QLatin1Char('\'')) {
            quotedHere();
            const qsizetype close = s.indexOf(QLatin1Char('\''), i + 1);
            const qsizetype end = close < 0 ? s.size() : close;
            w.text += s.mid(i + 1, end - i - 1);
            i = end + 1;
        } else if (c == QLatin1Char('"')) {
            quotedHere();
            for (++i; i < s.size() && s[i] != QLatin1Char('"');) {
                const QChar d = s[i];
                if (d == QLatin1Char('\\') && i + 1 < s.size() &&
                    QStringLiteral("$`\"\\\n").contains(s[i + 1])) {
                    if (s[i + 1] != QLatin1Char('\n'))
                        w.text += s[i + 1];
                    i += 2;
                } else if (d == QLatin1Char('$') && i + 1 < s.size() &&
                           s[i + 1] != QLatin1Char('"')) {
                    w.dynamic = true;
                    i = skipExpansion(s, i, &w.text);
                } else if (d == QLatin1Char('`')) {
                    w.dynamic = true;
                    i = skipBackquoted(s, i, &w.text);
                } else {
                    w.text += d;
                    ++i;
                }
            }
            ++i;
        } else if (c == QLatin1Char('$') && i + 1 < s.size() &&
                   (!isBreak(s[i + 1]) || s[i + 1] == QLatin1Char('('))) {
            w.dynamic = true;
            i = skipExpansion(s, i, &w.text);
        } else if (c == QLatin1Char('`')) {
            w.dynamic = true;
            i = skipBackquoted(s, i, &w.text);
        } else {
            if (c == QLatin1Char('*') || c == QLatin1Char('?') || c == QLatin1Char('['))
                w.dynamic = true;
            else if (c == QLatin1Char('{'))
                braceOpen = true;
            else if (c == QLatin1Char('}') && braceOpen)
                w.dynamic = true;
            w.text += c;
            ++i;
        }
    }
    return std::min(i, s.size());
}

// Past the bodies of the here-documents opened on the line that just ended at `i`.
qsizetype skipHeredocs(const QString &s, qsizetype i, std::vector<std::pair<QString, bool>> &docs)
{
    for (const auto &[delimiter, stripTabs] : docs) {
        while (i < s.size()) {
            const qsizetype nl = s.indexOf(QLatin1Char('\n'), i);
            const qsizetype end = nl < 0 ? s.size() : nl;
            QString line = s.mid(i, end - i);
            if (line.endsWith(QLatin1Char('\r')))
                line.chop(1);
            while (stripTabs && line.startsWith(QLatin1Char('\t')))
                line.remove(0, 1);
            i = nl < 0 ? s.size() : nl + 1;
            if (line == delimiter)
                break;
        }
    }
    docs.clear();
    return i;
}

} // namespace

std::vector<Token> tokens(const QString &input)
{
    // A command line is a C string to the shell that runs it: it ends at a NUL.
    const qsizetype nul = input.indexOf(QChar(0));
    const QString s = input.left(std::min(kMaxChars, nul < 0 ? input.size() : nul));
    std::vector<Token> out;
    std::vector<std::pair<QString, bool>> heredocs; // delimiter, strip leading tabs
    enum class Next { Word, Target, Drop, Heredoc, HeredocStrip } next = Next::Word;
    auto mark = [&](Token::Type type) {
        next = Next::Word;
        Token t;
        t.type = type;
        out.push_back(std::move(t));
    };
    const qsizetype n = s.size();
    qsizetype i = 0;
    auto at = [&](qsizetype k, char c) { return k < n && s[k] == QLatin1Char(c); };
    while (i < n && out.size() < kMaxTokens) {
        const QChar c = s[i];
        if (c == QLatin1Char(' ') || c == QLatin1Char('\t') || c == QLatin1Char('\r')) {
            ++i;
        } else if (c == QLatin1Char('\\') && at(i + 1, '\n')) {
            i += 2;
        } else if (c == QLatin1Char('\n')) {
            mark(Token::Separator);
            i = skipHeredocs(s, i + 1, heredocs);
        } else if (c == QLatin1Char('#')) {
            while (i < n && s[i] != QLatin1Char('\n'))
                ++i;
        } else if (c == QLatin1Char(';')) {
            mark(Token::Separator);
            i += at(i + 1, ';') ? 2 : 1;
        } else if (c == QLatin1Char('&') && at(i + 1, '>')) {
            i += at(i + 2, '>') ? 3 : 2; // &> and &>>: stdout and stderr to a file
            next = Next::Target;
        } else if (c == QLatin1Char('&') || c == QLatin1Char('|')) {
            mark(Token::Separator);
            i += at(i + 1, '&') || at(i + 1, '|') ? 2 : 1;
        } else if (c == QLatin1Char('(')) {
            mark(Token::Open);
            ++i;
        } else if (c == QLatin1Char(')')) {
            mark(Token::Close);
            ++i;
        } else {
            // A redirection, with the descriptor it names first (2>err.log).
            qsizetype j = i;
            while (j < n && s[j].isDigit())
                ++j;
            const bool redirect = at(j, '>') || at(j, '<');
            if (redirect && (j == i || j < n))
                i = j;
            if (redirect && s[i] == QLatin1Char('>')) {
                ++i;
                if (at(i, '(')) { // >(command): a process, not a file
                    i = skipBalanced(s, i);
                    continue;
                }
                if (at(i, '>') || at(i, '|'))
                    ++i;
                next = Next::Target;
                if (at(i, '&')) {
                    qsizetype k = ++i;
                    while (k < n && s[k].isDigit())
                        ++k;
                    if (at(k, '-'))
                        ++k;
                    if (k > i && (k == n || isBreak(s[k]))) {
                        i = k; // >&2, >&-: a descriptor, not a file
                        next = Next::Word;
                    }
                }
            } else if (redirect) {
                ++i;
                if (at(i, '(')) {
                    i = skipBalanced(s, i);
                    continue;
                }
                next = Next::Drop;
                if (at(i, '<') && !at(i + 1, '<')) {
                    ++i;
                    next = at(i, '-') ? Next::HeredocStrip : Next::Heredoc;
                    i += at(i, '-') ? 1 : 0;
                } else if (at(i, '<') || at(i, '&') || at(i, '>')) {
                    i += at(i, '<') ? 2 : 1; // <<< word, <&N, <> file
                }
            } else {
                Token w;
                i = readWord(s, i, w);
                switch (next) {
                case Next::Word:
                    out.push_back(std::move(w));
                    break;
                case Next::Target:
                    w.type = Token::WriteTarget;
                    out.push_back(std::move(w));
                    break;
                case Next::Drop:
                    break;
                case Next::Heredoc:
                case Next::HeredocStrip:
                    heredocs.emplace_back(w.text, next == Next::HeredocStrip);
                    break;
                }
                next = Next::Word;
            }
        }
    }
    return out;
}

} // namespace shelllexer
