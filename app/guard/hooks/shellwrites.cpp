#include "shellwrites.h"

#include "shelllexer.h"

#include <QDir>

namespace shellwrites {

namespace {

using shelllexer::Token;

constexpr int kMaxDepth = 4;

// Where relative paths are read from: `dir` below the command's starting folder ("" for it),
// or absolute; unknown after a `cd` the parser cannot follow.
struct Folder
{
    QString dir;
    bool known = true;
};

class Reader
{
public:
    explicit Reader(const IsDirectory &isDirectory)
        : m_isDirectory(isDirectory)
    {}

    void line(const QString &text, Folder folder, int depth);
    QStringList take() { return std::move(m_out); }

private:
    struct Command
    {
        std::vector<Token> words;
        std::vector<Token> targets; // of output redirections
    };
    void command(Command &c, Folder &folder, int depth);
    void add(const Folder &folder, const Token &word);
    QString resolve(const Folder &folder, const QString &path) const;
    bool isFolder(const Folder &folder, const QString &path) const;

    void tee(const Folder &f, const std::vector<Token> &args);
    void sed(const Folder &f, const std::vector<Token> &args);
    void operands(const Folder &f, const std::vector<Token> &args, const QString &withValue);
    void copy(const Folder &f, const std::vector<Token> &args, bool move);
    void git(const Folder &f, std::vector<Token> args);

    const IsDirectory &m_isDirectory;
    QStringList m_out;
};

QString baseName(const QString &word)
{
    return word.mid(word.lastIndexOf(QLatin1Char('/')) + 1);
}

bool isAssignment(const Token &t)
{
    const qsizetype eq = t.text.indexOf(QLatin1Char('='));
    if (eq <= 0 || t.quotedName)
        return false;
    for (qsizetype i = 0; i < eq; ++i) {
        const QChar c = t.text[i];
        if (!(c.isLetterOrNumber() || c == QLatin1Char('_')) || (i == 0 && c.isDigit()))
            return false;
    }
    return true;
}

bool isOption(const Token &t)
{
    return t.text.size() > 1 && t.text.startsWith(QLatin1Char('-'));
}

// The words after the wrappers that only run the rest (sudo, env, nohup, ...) and shell
// keywords that open a command (if, then, do, !, ...).
std::vector<Token> unwrap(std::vector<Token> w)
{
    std::size_t i = 0;
    for (bool again = true; again && i < w.size();) {
        again = false;
        while (i < w.size() && isAssignment(w[i]))
            ++i;
        if (i >= w.size())
            break;
        const QString name = w[i].text;
        auto skipOptions = [&](std::initializer_list<const char *> withValue) {
            ++i;
            while (i < w.size() &&
                   (isOption(w[i]) || (name == QLatin1String("env") && isAssignment(w[i])))) {
                bool takes = false;
                for (const char *o : withValue)
                    takes = takes || w[i].text == QLatin1String(o);
                i += takes ? 2 : 1;
            }
            again = true;
        };
        if (name == QLatin1String("sudo"))
            skipOptions({"-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U"});
        else if (name == QLatin1String("env"))
            skipOptions({"-u", "-C", "-S"});
        else if (name == QLatin1String("nice"))
            skipOptions({"-n"});
        else if (name == QLatin1String("nohup") || name == QLatin1String("exec") ||
                 name == QLatin1String("time") || name == QLatin1String("command"))
            skipOptions({});
        else if (name == QLatin1String("timeout")) {
            skipOptions({"-s", "-k", "--signal", "--kill-after"});
            ++i; // the duration
        } else {
            for (const char *k : {"!", "if", "then", "else", "elif", "do", "while", "until", "{"}) {
                if (!again && name == QLatin1String(k)) {
                    ++i;
                    again = true;
                }
            }
        }
    }
    return i < w.size() ? std::vector<Token>(w.begin() + std::ptrdiff_t(i), w.end())
                        : std::vector<Token>();
}

} // namespace

void Reader::line(const QString &text, Folder folder, int depth)
{
    std::vector<Folder> saved; // at each '('
    Command current;
    for (const Token &t : shelllexer::tokens(text)) {
        switch (t.type) {
        case Token::Word:
            current.words.push_back(t);
            break;
        case Token::WriteTarget:
            current.targets.push_back(t);
            break;
        case Token::Separator:
            command(current, folder, depth);
            break;
        case Token::Open:
            command(current, folder, depth);
            saved.push_back(folder);
            break;
        case Token::Close:
            command(current, folder, depth);
            if (!saved.empty()) {
                folder = saved.back();
                saved.pop_back();
            }
            break;
        }
    }
    command(current, folder, depth);
}

void Reader::command(Command &c, Folder &folder, int depth)
{
    for (const Token &target : c.targets)
        add(folder, target);
    const std::vector<Token> w = unwrap(std::move(c.words));
    c = Command();
    if (w.empty() || w[0].dynamic)
        return;
    const QString name = baseName(w[0].text);
    const std::vector<Token> args(w.begin() + 1, w.end());
    if (name == QLatin1String("cd")) {
        if (args.size() == 1 && !args[0].dynamic && args[0].text != QLatin1String("-")) {
            const QString to = resolve(folder, args[0].text);
            folder = to.isNull() ? Folder{{}, false} : Folder{QDir::cleanPath(to), true};
            if (folder.dir == QLatin1String("."))
                folder.dir.clear();
        } else {
            folder.known = false;
        }
    } else if (name == QLatin1String("tee")) {
        tee(folder, args);
    } else if (name == QLatin1String("sed")) {
        sed(folder, args);
    } else if (name == QLatin1String("rm") || name == QLatin1String("rmdir")) {
        operands(folder, args, {});
    } else if (name == QLatin1String("touch")) {
        operands(folder, args, QStringLiteral("-d -t -r --date --reference --time"));
    } else if (name == QLatin1String("cp") || name == QLatin1String("mv")) {
        copy(folder, args, name == QLatin1String("mv"));
    } else if (name == QLatin1String("git")) {
        git(folder, args);
    } else if (depth < kMaxDepth &&
               (name == QLatin1String("bash") || name == QLatin1String("sh") ||
                name == QLatin1String("zsh") || name == QLatin1String("dash") ||
                name == QLatin1String("ksh"))) {
        // `bash -c SCRIPT` (also -lc, -ec, ...): the script is the first word after the options.
        bool script = false;
        for (const Token &a : args) {
            if (isOption(a) && !a.text.startsWith(QLatin1String("--"))) {
                script = script || a.text.contains(QLatin1Char('c'));
                continue;
            }
            if (isOption(a))
                continue;
            if (script)
                line(a.text, folder, depth + 1);
            break;
        }
    } else if (name == QLatin1String("eval") && depth < kMaxDepth) {
        QStringList words;
        for (const Token &a : args)
            words << a.text;
        line(words.join(QLatin1Char(' ')), folder, depth + 1);
    }
}

QString Reader::resolve(const Folder &folder, const QString &path) const
{
    if (path.startsWith(QLatin1Char('/')))
        return path;
    if (path == QLatin1String("~") || path.startsWith(QLatin1String("~/")))
        return QDir::homePath() + path.mid(1);
    if (!folder.known || path.startsWith(QLatin1Char('~')))
        return {};
    return folder.dir.isEmpty() ? path : folder.dir + QLatin1Char('/') + path;
}

bool Reader::isFolder(const Folder &folder, const QString &path) const
{
    if (path.endsWith(QLatin1Char('/')))
        return true;
    const QString resolved = resolve(folder, path);
    return !resolved.isNull() && m_isDirectory && m_isDirectory(resolved);
}

void Reader::add(const Folder &folder, const Token &word)
{
    if (word.dynamic || word.text.isEmpty())
        return;
    for (const char *device : {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}) {
        if (word.text == QLatin1String(device))
            return;
    }
    if (word.text.startsWith(QLatin1String("/dev/fd/")) ||
        word.text.startsWith(QLatin1String("/proc/self/fd/")))
        return;
    const QString path = resolve(folder, word.text);
    if (!path.isNull() && !m_out.contains(path))
        m_out << path;
}

void Reader::tee(const Folder &f, const std::vector<Token> &args)
{
    operands(f, args, {});
}

void Reader::operands(const Folder &f, const std::vector<Token> &args, const QString &withValue)
{
    const QStringList valued = withValue.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    bool options = true;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const Token &a = args[i];
        if (options && a.text == QLatin1String("--")) {
            options = false;
        } else if (options && isOption(a)) {
            if (valued.contains(a.text))
                ++i; // its value
        } else {
            add(f, a);
        }
    }
}

void Reader::sed(const Folder &f, const std::vector<Token> &args)
{
    bool inPlace = false;
    bool haveScript = false;
    std::vector<Token> rest;
    bool options = true;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const QString &a = args[i].text;
        if (options && a == QLatin1String("--")) {
            options = false;
        } else if (options && a.startsWith(QLatin1String("--"))) {
            inPlace = inPlace || a == QLatin1String("--in-place") ||
                      a.startsWith(QLatin1String("--in-place="));
            if (a == QLatin1String("--expression") || a == QLatin1String("--file") ||
                a == QLatin1String("--line-length"))
                ++i;
            haveScript = haveScript || a.startsWith(QLatin1String("--expression")) ||
                         a.startsWith(QLatin1String("--file"));
        } else if (options && isOption(args[i])) {
            // A cluster of short options: -n -E -r -s -u -z, -i[SUFFIX] (the rest of the word),
            // -e SCRIPT / -f FILE / -l N (the rest of the word, else the next word).
            for (qsizetype k = 1; k < a.size(); ++k) {
                const QChar c = a[k];
                if (c == QLatin1Char('i')) {
                    inPlace = true;
                    break;
                }
                if (c == QLatin1Char('e') || c == QLatin1Char('f') || c == QLatin1Char('l')) {
                    haveScript = haveScript || c != QLatin1Char('l');
                    if (k + 1 == a.size())
                        ++i;
                    break;
                }
            }
        } else {
            rest.push_back(args[i]);
        }
    }
    if (!inPlace)
        return;
    for (std::size_t i = haveScript ? 0 : 1; i < rest.size(); ++i)
        add(f, rest[i]);
}

void Reader::copy(const Folder &f, const std::vector<Token> &args, bool move)
{
    std::optional<Token> targetDir;
    bool exact = false; // -T: the destination is the name itself, never a folder
    std::vector<Token> names;
    bool options = true;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const QString &a = args[i].text;
        if (options && a == QLatin1String("--")) {
            options = false;
        } else if (options && a.startsWith(QLatin1String("--"))) {
            exact = exact || a == QLatin1String("--no-target-directory");
            if (a.startsWith(QLatin1String("--target-directory="))) {
                Token t = args[i];
                t.text = a.mid(int(sizeof("--target-directory=")) - 1);
                targetDir = t;
            } else if (a == QLatin1String("--target-directory") && i + 1 < args.size()) {
                targetDir = args[++i];
            } else if (a == QLatin1String("--suffix")) {
                ++i;
            }
        } else if (options && isOption(args[i])) {
            for (qsizetype k = 1; k < a.size(); ++k) {
                const QChar c = a[k];
                exact = exact || c == QLatin1Char('T');
                if (c == QLatin1Char('t') || c == QLatin1Char('S')) {
                    Token value = args[i];
                    if (k + 1 < a.size())
                        value.text = a.mid(k + 1);
                    else if (i + 1 < args.size())
                        value = args[++i];
                    if (c == QLatin1Char('t'))
                        targetDir = value;
                    break;
                }
            }
        } else {
            names.push_back(args[i]);
        }
    }
    std::vector<Token> sources = names;
    Token dest;
    if (targetDir) {
        dest = *targetDir;
    } else {
        if (names.size() < 2)
            return;
        dest = names.back();
        sources.pop_back();
    }
    if (move) {
        for (const Token &s : sources)
            add(f, s);
    }
    const bool intoFolder = targetDir || (!exact && (sources.size() > 1 || isFolder(f, dest.text)));
    if (!intoFolder || dest.dynamic)
        return add(f, dest);
    for (const Token &s : sources) {
        if (s.dynamic)
            continue;
        QString name = s.text;
        while (name.endsWith(QLatin1Char('/')) && name.size() > 1)
            name.chop(1);
        Token inside = dest;
        inside.text =
            (dest.text.endsWith(QLatin1Char('/')) ? dest.text : dest.text + QLatin1Char('/')) +
            baseName(name);
        add(f, inside);
    }
}

void Reader::git(const Folder &f, std::vector<Token> args)
{
    Folder at = f;
    std::size_t i = 0;
    while (i < args.size() && isOption(args[i])) {
        const QString &a = args[i].text;
        if (a == QLatin1String("-C") && i + 1 < args.size() && !args[i + 1].dynamic) {
            const QString to = resolve(at, args[i + 1].text);
            at = to.isNull() ? Folder{{}, false} : Folder{QDir::cleanPath(to), true};
            i += 2;
        } else if (a == QLatin1String("-c") || a == QLatin1String("--git-dir") ||
                   a == QLatin1String("--work-tree")) {
            return; // another repository or configuration: the gate's
        } else if (a == QLatin1String("--no-pager") || a == QLatin1String("-P")) {
            ++i;
        } else {
            return;
        }
    }
    if (i >= args.size())
        return;
    const QString sub = args[i].text;
    const std::vector<Token> rest(args.begin() + std::ptrdiff_t(i + 1), args.end());
    if (sub == QLatin1String("checkout")) {
        // Only the plain form names files: with `--`, everything after it.
        for (std::size_t k = 0; k < rest.size(); ++k) {
            if (rest[k].text == QLatin1String("--")) {
                for (std::size_t p = k + 1; p < rest.size(); ++p)
                    add(at, rest[p]);
                return;
            }
        }
    } else if (sub == QLatin1String("restore")) {
        bool staged = false, worktree = false;
        for (const Token &r : rest) {
            staged = staged || r.text == QLatin1String("--staged") || r.text == QLatin1String("-S");
            worktree =
                worktree || r.text == QLatin1String("--worktree") || r.text == QLatin1String("-W");
        }
        if (!staged || worktree)
            operands(at, rest, QStringLiteral("-s --source"));
    }
}

QStringList files(const QString &command, const IsDirectory &isDirectory)
{
    Reader reader(isDirectory);
    reader.line(command, Folder(), 0);
    QStringList out = reader.take();
    out.removeAll(QStringLiteral("."));
    return out;
}

} // namespace shellwrites
