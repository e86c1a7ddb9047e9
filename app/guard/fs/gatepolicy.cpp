#include "gatepolicy.h"

namespace leasehold::fsgate {

std::string_view changeOpName(ChangeOp op)
{
    switch (op) {
    case ChangeOp::Open:
        return "open";
    case ChangeOp::Truncate:
        return "truncate";
    case ChangeOp::WriteData:
        return "write";
    case ChangeOp::Create:
        return "create";
    case ChangeOp::Mkdir:
        return "mkdir";
    case ChangeOp::Symlink:
        return "symlink";
    case ChangeOp::Link:
        return "link";
    case ChangeOp::Unlink:
        return "unlink";
    case ChangeOp::Rmdir:
        return "rmdir";
    case ChangeOp::Rename:
        return "rename";
    case ChangeOp::Exchange:
        return "exchange";
    case ChangeOp::SetAttr:
        return "setattr";
    case ChangeOp::Xattr:
        return "xattr";
    }
    return "unknown";
}

} // namespace leasehold::fsgate
