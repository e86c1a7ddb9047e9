#include "tokenallocator.h"

#include <utility>

namespace leasehold {

TokenAllocator::TokenAllocator(std::uint64_t first, std::uint64_t blockSize, Reserve reserve)
    : m_next(first)
    , m_reservedEnd(first)
    , m_blockSize(blockSize == 0 ? 1 : blockSize)
    , m_reserve(std::move(reserve))
{}

std::uint64_t TokenAllocator::next()
{
    if (m_next >= m_reservedEnd) {
        m_reservedEnd = m_next + m_blockSize;
        if (m_reserve)
            m_reserve(m_reservedEnd);
    }
    return m_next++;
}

} // namespace leasehold
