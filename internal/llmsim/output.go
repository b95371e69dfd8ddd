package llmsim

import (
	"math"
	"math/rand/v2"
)

// vocabulary holds the output tokens: common English words with a leading
// space, each a single token with or without that space in both
// cl100k_base and o200k_base. None needs escaping in JSON.
var vocabulary = [...]string{
	" the", " of", " and", " to", " in", " is", " that", " for", " it", " with",
	" as", " was", " on", " be", " at", " by", " this", " have", " from", " or",
	" one", " had", " not", " but", " what", " all", " were", " when", " we",
	" there", " can", " an", " your", " which", " their", " said", " if", " do",
	" will", " each", " about", " how", " up", " out", " them", " then", " she",
	" many", " some", " so", " these", " would", " other", " into", " has",
	" more", " her", " two", " like", " him", " see", " time", " could", " no",
	" make", " than", " first", " been", " its", " who", " now", " people",
	" my", " made", " over", " did", " down", " only", " way", " find", " use",
	" may", " water", " long", " little", " very", " after", " words",
	" called", " just", " where", " most", " know", " get", " through", " back",
	" much", " before", " go", " good", " new", " write", " our", " used",
	" me", " man", " too", " any", " day", " same", " right", " look", " think",
	" also", " around", " another", " came", " come", " work", " three",
	" word", " must", " because", " does", " part", " even", " place", " well",
	" such", " here", " take", " why", " things", " help", " put", " years",
	" different", " away", " again", " off", " went", " old", " number",
	" great", " tell", " men", " say", " small", " every", " found", " still",
	" between", " name", " should", " home", " big", " give", " air", " line",
	" set", " own", " under", " read", " last", " never", " us", " left",
	" end", " along", " while", " might", " next", " sound", " below",
	" something", " thought", " both", " few", " those", " always", " show",
	" large", " often", " house", " world", " going", " want", " school",
	" important", " until", " form", " food", " keep", " children", " land",
	" side", " without", " boy", " once", " animals", " life", " sometimes",
	" four", " head", " above", " kind", " almost", " live", " page", " got",
	" earth", " need", " far", " hand", " high", " year", " mother", " light",
	" parts", " country", " father", " let", " night", " following", " picture",
	" being", " study", " second", " eyes", " soon", " times", " story",
	" boys", " since", " white", " days", " ever", " paper", " hard", " near",
	" sentence", " better", " best", " during", " today", " others", " however",
	" sure", " means", " try", " young", " sun", " ways", " thing", " whole",
	" hear",
}

// textSource draws one request's output: its length, then its words.
type textSource struct {
	rng *rand.Rand
}

// newTextSource seeds a request's source from the server's seed and the
// request's arrival number.
func newTextSource(seed int64, arrival uint64) textSource {
	return textSource{rng: rand.New(rand.NewPCG(uint64(seed), arrival))}
}

// length returns how many tokens j generates and its finish reason. Without
// ignore_eos the natural length is exponential with the given mean, at
// least j.minTokens; reaching j.maxTokens ends it with "length".
func (t textSource) length(j *job, mean int) (int, string) {
	if j.ignoreEOS {
		return j.maxTokens, "length"
	}
	n := max(math.Ceil(t.rng.ExpFloat64()*float64(mean)), float64(j.minTokens)) // ≥ 1
	if n >= float64(j.maxTokens) {
		return j.maxTokens, "length"
	}
	return int(n), "stop"
}

// word returns the next token's text, with its leading space.
func (t textSource) word() string {
	return vocabulary[t.rng.IntN(len(vocabulary))]
}
