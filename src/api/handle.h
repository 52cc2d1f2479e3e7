// The special members every public handle of the API defines the same way.
#pragma once

// EDGEC_HANDLE_MOVES(Class): the move constructor, move assignment and destructor of a handle
// that holds its Impl through a smart pointer, defined in the .cc where Impl is complete.
#define EDGEC_HANDLE_MOVES(Class)                     \
  Class::Class(Class&&) noexcept = default;           \
  Class& Class::operator=(Class&&) noexcept = default; \
  Class::~Class() = default;
