#pragma once
// Word alignments of a training corpus for guided alignment (docs/design.md §2.2): one line
// per sentence pair, Pharaoh links "i-j" (0-based source word i, target word j, separated by
// spaces; an empty line: no links), as fast_align, eflomal and `rnnsearch align` write them.
// The words are the tokenizer's tokens (with --tokenizer raw: the whitespace-separated words).
//
// The model sees subword pieces, so a word link becomes the links of every piece of its
// target word to every piece of its source word (Marian's mapping for subword models).
// A line is read by text/pharaoh.h's parse_pharaoh_line (in the line's order, repeats kept).
#include <vector>

#include "rnnsearch/text/pharaoh.h"

namespace rnnsearch {

// The piece links of word links, as flat pairs [source piece, target piece, ...], sorted and
// without repeats. *_word_of_piece: each piece's word (join_pieces), *_words the sentence's
// word counts. Throws rnnsearch::Error naming a link outside the sentence.
std::vector<int> piece_links(const std::vector<WordLink>& word_links, const std::vector<int>& src_word_of_piece,
                             int src_words, const std::vector<int>& tgt_word_of_piece, int tgt_words);

}  // namespace rnnsearch
