"""tf.data's own pipeline over the photos (image_dataset_from_directory, then Keras' RandomCrop-free
equivalent of RandomResizedCrop 224 (tf.image.sample_distorted_bounding_box + resize), flip and
normalisation, AUTOTUNE), for bench/frameworks/compare.sh. Prints: tf.data 1 SAMPLES SECONDS RATE."""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

MEAN = tf.constant([0.485, 0.456, 0.406]) * 255
STD = tf.constant([0.229, 0.224, 0.225]) * 255


def rrc_flip_norm(path, label):
    image = tf.io.decode_image(tf.io.read_file(path), channels=3, expand_animations=False)
    begin, size, _ = tf.image.sample_distorted_bounding_box(
        tf.shape(image), tf.zeros((0, 0, 4)), area_range=(0.08, 1.0), aspect_ratio_range=(3 / 4, 4 / 3),
        min_object_covered=0.0, use_image_if_no_bounding_boxes=True)
    image = tf.image.resize(tf.slice(image, begin, size), (224, 224), antialias=True)
    image = tf.image.random_flip_left_right(image)
    return (image - MEAN) / STD, label


def main():
    root = sys.argv[1]
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)
    classes = sorted({os.path.basename(os.path.dirname(f)) for f in files})
    labels = [classes.index(os.path.basename(os.path.dirname(f))) for f in files]
    ds = (tf.data.Dataset.from_tensor_slices((files, labels)).shuffle(len(files))
          .map(rrc_flip_norm, num_parallel_calls=tf.data.AUTOTUNE).batch(256).prefetch(tf.data.AUTOTUNE))
    for _ in ds:  # warm-up epoch
        pass
    samples, t0 = 0, time.perf_counter()
    for images, _ in ds:
        samples += int(images.shape[0])
    seconds = time.perf_counter() - t0
    print(f"tf.data 1 {samples} {seconds:.3f} {samples / seconds:.1f}", flush=True)


if __name__ == "__main__":
    main()
