package xgboost

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// A model whose num_trees claims more (or fewer) trees than it holds is
// refused, naming both counts; the claim of a real model passes.
func TestNumTreesClaim(t *testing.T) {
	good := handModel("reg:squarederror", "5E-1", 0)
	if _, err := importProto([]byte(good), Options{}); err != nil {
		t.Fatalf("one tree, num_trees 1: %v", err)
	}
	for _, claim := range []string{"1000000000", "0", "2", "x"} {
		bad := strings.Replace(good, `"num_trees":"1"`, `"num_trees":"`+claim+`"`, 1)
		_, err := importProto([]byte(bad), Options{})
		if err == nil || !strings.Contains(err.Error(), "num_trees") {
			t.Errorf("num_trees %q: %v, want a refusal naming num_trees", claim, err)
		}
	}
}

// Category segments that overlap (every split's segment the whole list)
// are refused before they are copied per node.
func TestOverlappingCategorySegments(t *testing.T) {
	two := strings.Replace(handCategorical, `"left_children":[1,-1,-1],"right_children":[2,-1,-1]`,
		`"left_children":[1,3,-1,-1,-1],"right_children":[2,4,-1,-1,-1]`, 1)
	two = strings.Replace(two, `"split_indices":[1,0,0],"split_conditions":[0,-3,5],"default_left":[0,0,0],
   "split_type":[1,0,0],"categories":[1,3],"categories_nodes":[0],"categories_segments":[0],"categories_sizes":[2]`,
		`"split_indices":[1,1,0,0,0],"split_conditions":[0,0,5,-3,1],"default_left":[0,0,0,0,0],
   "split_type":[1,1,0,0,0],"categories":[1,3],"categories_nodes":[0,1],"categories_segments":[0,0],"categories_sizes":[2,2]`, 1)
	two = strings.Replace(two, `"num_nodes":"3"`, `"num_nodes":"5"`, 1)
	_, err := importProto([]byte(two), Options{})
	if err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("two splits sharing one segment: %v, want the overlap refused", err)
	}
	if _, err := importProto([]byte(handCategorical), Options{}); err != nil {
		t.Errorf("one segment: %v", err)
	}
}

// A flood of untyped UBJSON nulls is refused by the value budget.
func TestUBJSONNullFlood(t *testing.T) {
	body := append([]byte("{i\x07learner["), bytes.Repeat([]byte("Z"), 1<<17)...)
	body = append(body, "]}"...)
	_, err := parseUBJSON(body)
	if err == nil || !strings.Contains(err.Error(), "untyped containers") {
		t.Errorf("%d nulls: %v, want the value budget's refusal", 1<<17, err)
	}
}

// xgboost's binary format of before 1.0 is recognized and refused with
// the way to convert it.
func TestOldBinaryMessage(t *testing.T) {
	param := make([]byte, 136)
	binary.LittleEndian.PutUint32(param[4:], 3)
	head := append([]byte("binf"), param...)
	head = binary.LittleEndian.AppendUint64(head, 15)
	head = append(head, "binary:logistic"...)
	head = binary.LittleEndian.AppendUint64(head, 6)
	head = append(head, "gbtree"...)
	if !looksOldBinary(head) || !looksOldBinary(head[4:]) {
		t.Fatal("the old binary header is not recognized")
	}
	if looksOldBinary([]byte(handCategorical)) {
		t.Error("a JSON model taken for the old binary format")
	}
	_, err := importProto(head, Options{})
	err = oldBinaryFallback(head, err)
	var ob *OldBinaryError
	if !errors.As(err, &ob) || !strings.Contains(err.Error(), "save_model('model.json')") {
		t.Errorf("old binary: %v, want an *OldBinaryError with the fix", err)
	}
}
