package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR.

func (c *converter) resize(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	if err := c.need4D(o.inputs[0]); err != nil {
		return err
	}
	size, err := c.constInts(o.inputs[1])
	if err != nil || len(size) != 2 || size[0] <= 0 || size[1] <= 0 {
		return fmt.Errorf("size must be a constant of two positive values")
	}
	var align, half bool
	if o.code == fb.BuiltinOperatorRESIZE_BILINEAR {
		opt, err := options[fb.ResizeBilinearOptions](o, fb.BuiltinOptionsResizeBilinearOptions)
		if err != nil {
			return err
		}
		align, half = opt.AlignCorners(), opt.HalfPixelCenters()
	} else {
		opt, err := options[fb.ResizeNearestNeighborOptions](o, fb.BuiltinOptionsResizeNearestNeighborOptions)
		if err != nil {
			return err
		}
		align, half = opt.AlignCorners(), opt.HalfPixelCenters()
	}
	if align && half {
		return fmt.Errorf("align_corners together with half_pixel_centers is not supported")
	}
	attrs := []*canonical.Attribute{}
	coord := "asymmetric"
	if align {
		coord = "align_corners"
	} else if half {
		coord = "half_pixel"
	}
	if o.code == fb.BuiltinOperatorRESIZE_BILINEAR {
		attrs = append(attrs, canonical.StringAttr("mode", "linear"))
	} else {
		attrs = append(attrs, canonical.StringAttr("mode", "nearest"))
		// TFLite: floor(x*scale) plain, round(x*scale) with align_corners,
		// floor((x+0.5)*scale) with half pixel centers, which is ONNX's
		// half_pixel rounded half up.
		nm := "floor"
		if align || half {
			nm = "round_prefer_ceil"
		}
		attrs = append(attrs, canonical.StringAttr("nearest_mode", nm))
	}
	attrs = append(attrs, canonical.StringAttr("coordinate_transformation_mode", coord))
	xt := c.tensor(o.inputs[0])
	var sizes []int64
	if c.opts.Opset >= 18 {
		sizes = []int64{size[0], size[1]}
		attrs = append(attrs, canonical.IntsAttr("axes", []int64{2, 3}...))
	} else {
		if xt.shape[0] <= 0 || xt.shape[3] <= 0 {
			return fmt.Errorf("resize of an input with unknown batch or channels needs opset 18")
		}
		sizes = []int64{xt.shape[0], xt.shape[3], size[0], size[1]}
	}
	x, err := c.floatValue(o.inputs[0], nchw)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], nchw, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Resize", []string{x, "", "", c.constI64(y+"_sizes", sizes)}, []string{y}, attrs...)
		return nil
	})
}
