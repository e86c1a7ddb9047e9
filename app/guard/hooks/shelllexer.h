#pragma once

#include <QString>

#include <vector>

// Splits a POSIX shell command line into words, separators and the targets of output
// redirections, as far as that can be done without running anything: quotes ('...', "..."),
// backslashes, comments, line continuations and here-documents (their bodies are skipped) are
// read as the shell reads them. A word whose value only the running shell knows - it holds an
// unquoted or double-quoted $, $(...), `...`, an unquoted glob character (* ? [) or a brace
// list, or starts with ~user - is marked `dynamic` (its text is what was written, unquoted).
// Input redirections, descriptor copies (2>&1, >&-) and process substitutions are dropped.
// Malformed input (an unclosed quote) still gives tokens: the rest of the line is one word; a
// NUL ends the line, as it ends the C string a shell is given.
//
// Pure function; any thread.
namespace shelllexer {

struct Token
{
    enum Type {
        Word,
        WriteTarget, // the word after > >> >| &> &>> N> N>> (and >&word)
        Separator,   // ; & && || | |& newline
        Open,        // (
        Close,       // )
    };
    Type type = Word;
    QString text;
    bool dynamic = false;
    // The word's name part was quoted before any '=' (so `"A"=1` runs a command, A=1 assigns).
    bool quotedName = false;
};

std::vector<Token> tokens(const QString &line);

} // namespace shelllexer
